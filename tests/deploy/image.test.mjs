// The container image as an operator runs it (built by `make image`): its root filesystem holds
// the binary only; its entrypoint + default command, run as the image's non-root user with the
// config file mounted where the default command looks and the URI in the environment, numbers
// inserted documents against the embedded test server (or MONGODB_URI); its health check
// command says healthy; its logs are JSON when asked. Run through `podman export` + `chroot
// --userspec` (what works on every machine we have), and through `podman run` where it works.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { IMAGE, run, freePort, waitFor } from "./support.mjs";

const CONFIG_PATH = "/etc/mongo-seq/mongo-seq.toml"; // where the default command looks
const DOCS = 5000;

let mongo;
let client;
let image; // `podman image inspect` of IMAGE
let rootfs;

/** Every file (not directory) under `dir`, relative to it. */
function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [relative(rootfs, path)];
  });
}

before(async () => {
  const inspect = run("podman", ["image", "inspect", IMAGE]);
  assert.equal(inspect.status, 0, `image ${IMAGE} not found (make image):\n${inspect.stderr}`);
  [image] = JSON.parse(inspect.stdout);
  console.log(`image ${IMAGE}: ${image.Size} bytes (${(image.Size / 1048576).toFixed(1)} MiB)`);

  // The image's root filesystem, as a container runtime would lay it out.
  rootfs = mkdtempSync(join(tmpdir(), "mongo-seq-image-"));
  chmodSync(rootfs, 0o755); // it is `/` for the image's user
  const created = run("podman", ["create", IMAGE]);
  assert.equal(created.status, 0, created.stderr);
  const cid = created.stdout.trim();
  const exported = run("sh", ["-c", `podman export "$0" | tar -C "$1" -x`, cid, rootfs]);
  run("podman", ["rm", cid]);
  assert.equal(exported.status, 0, exported.stderr);

  mongo = await startMongo();
  client = new MongoClient(mongo.uri);
});

after(async () => {
  await client?.close();
  await mongo?.stop();
  if (rootfs) rmSync(rootfs, { recursive: true, force: true });
});

test("the image: the binary and its notices alone, not root, entrypoint mongo-seq, default command reads the mounted config", () => {
  const config = image.Config;
  assert.deepEqual(
    files(rootfs).sort(),
    ["usr/local/bin/mongo-seq", "usr/share/doc/mongo-seq/LICENSE", "usr/share/doc/mongo-seq/THIRD-PARTY-NOTICES.md"],
    "nothing but the binary and its license notices (no shell, no libc)",
  );
  assert.deepEqual(config.Entrypoint, ["/usr/local/bin/mongo-seq"]);
  assert.deepEqual(config.Cmd, ["sidecar", "--config", CONFIG_PATH]);
  assert.match(config.User, /^[1-9]\d*:[1-9]\d*$/, "a numeric non-root user");
  assert.deepEqual(image.Healthcheck?.Test, ["CMD", "/usr/local/bin/mongo-seq", "health", "--config", CONFIG_PATH, "--timeout-ms", "4000"]);
  assert.ok(config.ExposedPorts?.["9464/tcp"], "exposes the HTTP port");
  const file = run("file", [join(rootfs, "usr/local/bin/mongo-seq")]);
  assert.match(file.stdout, /static/, file.stdout);
});

/** Environment of a process in the image: its Env, plus what the operator adds. */
function imageEnv(extra) {
  const env = Object.fromEntries(image.Config.Env.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  return { ...env, ...extra };
}

/** Runs `argv` inside the exported image as its user (chroot --userspec), like a container. */
function inImage(argv, env, options = {}) {
  return ["chroot", [`--userspec=${image.Config.User}`, rootfs, ...argv], { env, ...options }];
}

test("the image's entrypoint numbers inserted documents (chroot as the image's user)", async () => {
  assert.equal(process.getuid(), 0, "chroot needs root: run the deployment tests as root (CI does)");
  const db = uniqueDbName("image");
  const port = await freePort();
  // The "mounted" config, and the files a runtime provides (name resolution for MONGODB_URI).
  mkdirSync(join(rootfs, "etc/mongo-seq"), { recursive: true, mode: 0o755 });
  writeFileSync(
    join(rootfs, CONFIG_PATH),
    `[mongodb]\ncounters = "${db}.counters"\n\n[sidecar]\npoll_interval_ms = 20\nmax_await_ms = 200\n\n[http]\nport = ${port}\n\n[[trigger]]\ndatabase = "${db}"\ncollection = "orders"\nfield = "seq"\n`,
    { mode: 0o644 },
  );
  for (const file of ["/etc/hosts", "/etc/resolv.conf"]) if (existsSync(file)) copyFileSync(file, join(rootfs, file));
  const env = imageEnv({ MONGO_SEQ_URI: mongo.uri, MONGO_SEQ_LOG_FORMAT: "json", HOSTNAME: "image-test" });

  const version = run(...inImage([...image.Config.Entrypoint, "--version"], env));
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^mongo-seq \d+\.\d+\.\d+ \(commit [0-9a-f]{12}(-dirty)?\)$/m, "the image's binary knows its commit");
  console.log(`image binary: ${version.stdout.trim()}`);

  const [command, args, options] = inImage([...image.Config.Entrypoint, ...image.Config.Cmd], env);
  const sidecar = spawn(command, args, { ...options, stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((resolve) => sidecar.once("exit", (code, signal) => resolve(code ?? signal)));
  const logs = [];
  let watching = false;
  createInterface({ input: sidecar.stderr }).on("line", (line) => {
    logs.push(line);
    try {
      if (JSON.parse(line).message === "watching for inserts") watching = true;
    } catch {
      // asserted below: every line is JSON
    }
  });
  try {
    await waitFor(() => watching, 60_000, () => `the image's sidecar is not watching:\n${logs.join("\n")}`);
    const coll = client.db(db).collection("orders");
    for (let i = 0; i < DOCS; i += 500) {
      await coll.insertMany(Array.from({ length: 500 }, (_, j) => ({ i: i + j })));
    }
    await waitFor(
      async () => (await coll.countDocuments({ seq: { $exists: true } })) === DOCS,
      60_000,
      () => `not every document was numbered:\n${logs.slice(-20).join("\n")}`,
    );
    const numbers = (await coll.find({}, { projection: { _id: 0, seq: 1 } }).toArray()).map((d) => Number(d.seq)).sort((a, b) => a - b);
    assert.deepEqual(numbers, Array.from({ length: DOCS }, (_, i) => i + 1), "1..N, each once");

    // The image's own health check command, as the runtime would run it.
    const check = image.Healthcheck.Test.slice(1);
    const health = run(...inImage(check, env));
    assert.equal(health.status, 0, `${health.stdout}${health.stderr}`);
    assert.match(health.stdout, new RegExp(`^healthy: http://127\\.0\\.0\\.1:${port}/healthz \\(1 trigger: ${db}\\.orders\\.seq running\\)`));

    const status = readFileSync(`/proc/${sidecar.pid}/status`, "utf8");
    const kb = (field) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1]);
    console.log(`image sidecar after numbering ${DOCS} documents: RSS ${kb("VmRSS")} kB, peak ${kb("VmHWM")} kB`);
  } finally {
    sidecar.kill("SIGTERM");
    assert.equal(await exited, 0, `graceful shutdown exits 0:\n${logs.slice(-10).join("\n")}`);
    await client.db(db).dropDatabase();
  }
  for (const line of logs) assert.doesNotThrow(() => JSON.parse(line), `a log line that is not JSON: ${line}`);
  assert.ok(logs.some((line) => JSON.parse(line).message === "mongo-seq sidecar stopped"));
});

test("podman run: the same image under a container runtime", async (t) => {
  const probe = run("podman", ["run", "--rm", "--network=host", IMAGE, "--version"]);
  if (probe.status !== 0) {
    // Known on these machines (TOOLCHAIN.md): crun cannot set rlimits / cgroups here. The
    // chroot test above runs the image's entrypoint instead; a normal machine runs this one.
    // Any other failure of `podman run` fails the test.
    const reason = probe.stderr.trim().split("\n").at(-1);
    assert.match(reason, /setrlimit|cgroup/i, `podman run failed:\n${probe.stderr}`);
    t.skip(`podman run does not work on this machine: ${reason}`);
    return;
  }
  const db = uniqueDbName("podman_run");
  const dir = mkdtempSync(join(tmpdir(), "mongo-seq-podman-"));
  const port = await freePort();
  writeFileSync(
    join(dir, "mongo-seq.toml"),
    `[mongodb]\ncounters = "${db}.counters"\n\n[http]\nport = ${port}\n\n[[trigger]]\ndatabase = "${db}"\ncollection = "orders"\nfield = "seq"\n`,
    { mode: 0o644 },
  );
  const started = run("podman", [
    "run", "-d", "--network=host",
    "-v", `${join(dir, "mongo-seq.toml")}:${CONFIG_PATH}:ro,Z`,
    "-e", `MONGO_SEQ_URI=${mongo.uri}`, "-e", "MONGO_SEQ_LOG_FORMAT=json",
    IMAGE,
  ]);
  assert.equal(started.status, 0, started.stderr);
  const cid = started.stdout.trim();
  try {
    const coll = client.db(db).collection("orders");
    await waitFor(
      async () => {
        await coll.insertOne({ at: Date.now() });
        return (await coll.countDocuments({ seq: { $exists: true } })) > 0;
      },
      60_000,
      () => `podman run numbered nothing:\n${run("podman", ["logs", cid]).stderr}`,
    );
    const health = run("podman", ["exec", cid, ...image.Healthcheck.Test.slice(1)]);
    assert.equal(health.status, 0, health.stdout + health.stderr);
  } finally {
    const stop = run("podman", ["stop", "--time", "15", cid]);
    const exit = run("podman", ["inspect", "--format", "{{.State.ExitCode}}", cid]);
    run("podman", ["rm", cid]);
    rmSync(dir, { recursive: true, force: true });
    await client.db(db).dropDatabase();
    assert.equal(stop.status, 0, stop.stderr);
    assert.equal(exit.stdout.trim(), "0", "SIGTERM: graceful exit 0");
  }
});
