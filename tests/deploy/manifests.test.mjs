// The deployment files, checked offline: the Kubernetes manifests against the API schemas
// (kubernetes-validate, strict: unknown fields fail) of the oldest Kubernetes with native
// sidecars and of the newest it ships; the ConfigMap's TOML and the Secret's URI through the
// binary's own --check-config; the manifests agree with the image and the config (port, probe
// path, config path, user, version); the systemd unit through systemd-analyze.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root, run, venvTool, readYaml, BIN } from "./support.mjs";

const K8S = join(root, "deploy/kubernetes");
const manifests = readdirSync(K8S).filter((f) => f.endsWith(".yaml")).map((f) => join(K8S, f));
const resources = manifests.flatMap((path) => readYaml(path).map((doc) => ({ path, ...doc })));
const find = (kind, name) => resources.find((r) => r.kind === kind && r.metadata.name === name);
const containerfile = readFileSync(join(root, "sidecar/Containerfile"), "utf8");
const cargoVersion = JSON.parse(run("cargo", ["metadata", "--no-deps", "--format-version", "1", "--offline"], { cwd: root }).stdout)
  .packages.find((p) => p.name === "mongo-seq").version;

test("the Kubernetes manifests validate against the API schemas (1.29 and the newest)", () => {
  assert.ok(manifests.length >= 3, "config, sidecar-in-pod and standalone manifests");
  for (const version of ["1.29.0", null]) {
    const args = ["--strict", ...(version ? ["-k", version] : []), ...manifests];
    const result = run(venvTool("kubernetes-validate"), args);
    assert.equal(result.status, 0, `kubernetes-validate ${args.join(" ")}:\n${result.stdout}${result.stderr}`);
    const passed = (result.stdout + result.stderr).match(/passed/g)?.length ?? 0;
    assert.equal(passed, resources.length, `every resource validated:\n${result.stdout}${result.stderr}`);
  }
});

test("the ConfigMap's mongo-seq.toml and the Secret's URI pass mongo-seq's own --check-config", () => {
  const toml = find("ConfigMap", "mongo-seq").data["mongo-seq.toml"];
  const uri = find("Secret", "mongo-seq").stringData.MONGO_SEQ_URI;
  const dir = mkdtempSync(join(tmpdir(), "mongo-seq-configmap-"));
  try {
    writeFileSync(join(dir, "mongo-seq.toml"), toml);
    const env = { ...process.env, MONGO_SEQ_URI: uri };
    delete env.MONGODB_URI;
    const result = run(BIN, ["sidecar", "--config", join(dir, "mongo-seq.toml"), "--check-config"], { env });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /is valid: 1 trigger/);
    // Without the Secret the same file is refused, naming the key (the URI is not in the file).
    delete env.MONGO_SEQ_URI;
    const without = run(BIN, ["sidecar", "--config", join(dir, "mongo-seq.toml"), "--check-config"], { env });
    assert.equal(without.status, 2);
    assert.match(without.stderr, /mongodb\.uri/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each mongo-seq container agrees with the image and the config", () => {
  const toml = find("ConfigMap", "mongo-seq").data["mongo-seq.toml"];
  const port = Number(toml.match(/^port = (\d+)/m)[1]);
  const [, uid, gid] = containerfile.match(/^USER (\d+):(\d+)$/m);
  const deployments = resources.filter((r) => r.kind === "Deployment");
  assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), ["mongo-seq", "orders-api"]);
  for (const deployment of deployments) {
    const spec = deployment.spec.template.spec;
    const where = `${deployment.path} ${deployment.metadata.name}`;
    const sidecar = [...(spec.initContainers ?? []), ...spec.containers].find((c) => c.image.includes("/mongo-seq:"));
    assert.ok(sidecar, `${where}: has a mongo-seq container`);
    assert.ok(sidecar.image.endsWith(`/mongo-seq:${cargoVersion}`), `${where}: image tag is the crate version ${cargoVersion}`);
    assert.equal(sidecar.command, undefined, `${where}: runs the image's entrypoint`);
    assert.equal(sidecar.args, undefined, `${where}: and its default command`);

    const portOf = (ref) => (typeof ref === "number" ? ref : sidecar.ports.find((p) => p.name === ref)?.containerPort);
    assert.equal(sidecar.ports[0].containerPort, port, `${where}: container port = [http].port`);
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      if (!sidecar[probe]) continue;
      assert.equal(sidecar[probe].httpGet.path, "/healthz", `${where}: ${probe} asks /healthz`);
      assert.equal(portOf(sidecar[probe].httpGet.port), port, `${where}: ${probe} port`);
    }
    assert.ok(sidecar.livenessProbe, `${where}: liveness probe`);
    const annotations = deployment.spec.template.metadata.annotations;
    assert.equal(Number(annotations["prometheus.io/port"]), port, `${where}: scrape port`);

    const mount = sidecar.volumeMounts.find((m) => m.mountPath === "/etc/mongo-seq");
    assert.ok(mount?.readOnly, `${where}: config mounted read-only where the image's command reads it`);
    assert.equal(spec.volumes.find((v) => v.name === mount.name).configMap.name, "mongo-seq");
    const uri = sidecar.env.find((e) => e.name === "MONGO_SEQ_URI");
    assert.deepEqual(uri.valueFrom.secretKeyRef, { name: "mongo-seq", key: "MONGO_SEQ_URI" }, `${where}: URI from the Secret`);
    assert.equal(sidecar.env.find((e) => e.name === "MONGO_SEQ_INSTANCE_ID")?.valueFrom.fieldRef.fieldPath, "metadata.name");

    const security = sidecar.securityContext;
    assert.equal(spec.securityContext.runAsNonRoot, true, `${where}: runAsNonRoot`);
    assert.deepEqual([security.runAsUser, security.runAsGroup], [Number(uid), Number(gid)], `${where}: the image's user`);
    assert.equal(security.readOnlyRootFilesystem, true);
    assert.equal(security.allowPrivilegeEscalation, false);
    assert.deepEqual(security.capabilities.drop, ["ALL"]);
    assert.ok(sidecar.resources.requests.memory && sidecar.resources.limits.memory, `${where}: memory sized`);
    assert.ok(spec.terminationGracePeriodSeconds >= 15, `${where}: time to finish the batch and release the lease`);
  }
  const standalone = find("Deployment", "mongo-seq");
  assert.ok(standalone.spec.replicas >= 2 && standalone.spec.replicas <= 3, "standalone: 2–3 replicas (leases)");
  assert.ok(standalone.spec.template.spec.containers[0].readinessProbe, "standalone: readiness on /healthz");
  const inPod = find("Deployment", "orders-api").spec.template.spec.initContainers[0];
  assert.equal(inPod.restartPolicy, "Always", "a native sidecar");
  assert.equal(inPod.readinessProbe, undefined, "in the application's pod: the sidecar's health must not be the pod's readiness");
});

test("the systemd unit passes systemd-analyze verify and its security review", () => {
  const unit = join(root, "deploy/systemd/mongo-seq.service");
  const text = readFileSync(unit, "utf8");
  assert.match(text, /^ExecStart=\/usr\/local\/bin\/mongo-seq sidecar --config \/etc\/mongo-seq\/mongo-seq\.toml$/m);
  // verify checks that ExecStart exists: a root with the unit, a placeholder binary and
  // systemd's own units.
  const rootDir = mkdtempSync(join(tmpdir(), "mongo-seq-systemd-"));
  try {
    mkdirSync(join(rootDir, "usr/local/bin"), { recursive: true });
    mkdirSync(join(rootDir, "etc/systemd/system"), { recursive: true });
    mkdirSync(join(rootDir, "usr/lib/systemd"), { recursive: true });
    writeFileSync(join(rootDir, "usr/local/bin/mongo-seq"), "");
    chmodSync(join(rootDir, "usr/local/bin/mongo-seq"), 0o755);
    cpSync(unit, join(rootDir, "etc/systemd/system/mongo-seq.service"));
    cpSync("/lib/systemd/system", join(rootDir, "usr/lib/systemd/system"), { recursive: true });
    const verify = run("systemd-analyze", ["verify", "--man=no", `--root=${rootDir}`, "/etc/systemd/system/mongo-seq.service"]);
    assert.equal(verify.status, 0, verify.stderr);
    assert.equal(verify.stderr.trim(), "", "no warning (unknown keys are only warnings)");
  } finally {
    rmSync(rootDir, { recursive: true, force: true });
  }
  // `--threshold` is on systemd's internal 0–100 scale: 20 is the 2.0 it prints.
  const security = run("systemd-analyze", ["security", "--offline=true", "--threshold=20", unit]);
  const score = security.stdout.match(/Overall exposure level for mongo-seq\.service: ([\d.]+)/)?.[1];
  console.log(`systemd-analyze security: exposure ${score} (0 = locked down, 10 = unprotected)`);
  assert.equal(security.status, 0, `exposure above 2:\n${security.stdout.split("\n").filter((l) => l.startsWith("✗")).join("\n")}`);
});
