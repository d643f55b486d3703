// The static binaries of the release, as a user unpacks them: each archive holds the binary with
// its license, notices, README and CHANGELOG; the binary is static and for its architecture. The
// arm64 one runs under Debian's qemu-user (qemu-aarch64): --version, --check-config on the demo's
// configuration, and a numbering run against the embedded test server on this host (or
// MONGODB_URI), the binary emulated, ending with SIGTERM and exit 0.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { MongoClient } from "mongodb";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { TARGETS, VERSION, artifact, files, ok, root, run, untar } from "./support.mjs";

const DOCS = 300;
const unpacked = new Map(); // triple → directory of the unpacked archive
let mongo;
let client;

before(async () => {
  for (const { triple } of TARGETS) {
    const name = `mongo-seq-${VERSION}-${triple}`;
    unpacked.set(triple, join(untar(artifact(`${name}.tar.gz`)), name));
  }
  mongo = await startMongo();
  client = new MongoClient(mongo.uri);
});

after(async () => {
  await client?.close();
  await mongo?.stop();
});

const binary = (triple) => join(unpacked.get(triple), "mongo-seq");
/** The command that runs the binary of `triple` on this host: natively, or under qemu-user. */
function runner(triple) {
  const host = process.arch === "x64" ? "x86_64" : process.arch === "arm64" ? "aarch64" : process.arch;
  return triple.startsWith(host) ? [binary(triple)] : [`qemu-${triple.split("-")[0]}`, binary(triple)];
}

for (const { triple, elf } of TARGETS) {
  test(`${triple}: the archive holds the static binary, LICENSE, notices, README and CHANGELOG`, () => {
    const dir = unpacked.get(triple);
    assert.deepEqual(files(dir), ["CHANGELOG.md", "LICENSE", "README.md", "THIRD-PARTY-NOTICES.md", "mongo-seq"]);
    const described = ok("file", [binary(triple)]);
    assert.match(described, elf, described);
    assert.match(described, /statically linked|static-pie linked/, described);
    assert.match(described, /stripped/, described);
    assert.equal(readFileSync(join(dir, "THIRD-PARTY-NOTICES.md"), "utf8"), readFileSync(artifact("THIRD-PARTY-NOTICES-binary.md"), "utf8"));
    assert.equal(readFileSync(join(dir, "CHANGELOG.md"), "utf8"), readFileSync(join(root, "CHANGELOG.md"), "utf8"));
  });

  test(`${triple}: --version names the version and the commit (${runner(triple).length > 1 ? "under qemu-user" : "natively"})`, () => {
    const [command, ...args] = runner(triple);
    const version = ok(command, [...args, "--version"]);
    assert.match(version, new RegExp(`^mongo-seq ${VERSION.replaceAll(".", "\\.")} \\(commit [0-9a-f]{12}(-dirty)?\\)$`, "m"));
  });
}

test("the binaries' notices name the crates compiled in, with their license texts", () => {
  const notices = readFileSync(artifact("THIRD-PARTY-NOTICES-binary.md"), "utf8");
  assert.match(notices, /^# Third-party notices: the mongo-seq binary/);
  for (const crate of ["mongodb", "tokio", "ring", "rustls", "webpki-roots", "axum", "jiff", "clap"]) {
    assert.match(notices, new RegExp(`^- ${crate} \\d`, "m"), `notices name ${crate}`);
  }
  for (const text of [/Permission is hereby granted, free of charge/, /Apache License\s+Version 2\.0/, /ISC/, /Community Data License Agreement/]) {
    assert.match(notices, text);
  }
});

// Each binary's own run of the product's two first commands (the arm64 one emulated).
for (const { triple } of TARGETS) {
  const how = runner(triple).length > 1 ? "under qemu-user" : "natively";

  test(`${triple} ${how}: --check-config accepts the demo's configuration`, () => {
    const [command, ...args] = runner(triple);
    const checked = run(command, [...args, "sidecar", "--config", join(root, "demo", "mongo-seq.toml"), "--check-config"]);
    assert.equal(checked.status, 0, checked.stderr);
    assert.match(checked.stdout + checked.stderr, /config .*mongo-seq\.toml is valid: 2 trigger\(s\)/);
    const bad = run(command, [...args, "sidecar", "--config", join(root, "Cargo.toml"), "--check-config"]);
    assert.equal(bad.status, 2, "a file that is not a configuration exits 2");
  });

  test(`${triple} ${how}: the sidecar numbers inserted documents on the host's server, then stops on SIGTERM`, async () => {
    const db = uniqueDbName(`release_${triple.split("-")[0]}`);
    const config = join(mkdtempSync(join(tmpdir(), `mongo-seq-${triple.split("-")[0]}-`)), "mongo-seq.toml");
    writeFileSync(
      config,
      `[mongodb]\ncounters = "${db}.counters"\n\n[sidecar]\npoll_interval_ms = 20\nmax_await_ms = 200\n\n[http]\nport = 0\n\n[[trigger]]\ndatabase = "${db}"\ncollection = "orders"\nfield = "seq"\n`,
    );
    const [command, ...args] = runner(triple);
    const sidecar = spawn(command, [...args, "sidecar", "--config", config], {
      env: { ...process.env, MONGO_SEQ_URI: mongo.uri, MONGO_SEQ_LOG_FORMAT: "json" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise((resolve) => sidecar.once("exit", (code, signal) => resolve(code ?? signal)));
    const logs = [];
    let watching = false;
    createInterface({ input: sidecar.stderr }).on("line", (line) => {
      logs.push(line);
      if (line.includes("watching for inserts")) watching = true;
    });
    const waitFor = async (probe, ms, message) => {
      const deadline = Date.now() + ms;
      while (!(await probe())) {
        if (Date.now() > deadline) throw new Error(`${message}:\n${logs.slice(-20).join("\n")}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    try {
      await waitFor(() => watching, 120_000, "the sidecar is not watching");
      const orders = client.db(db).collection("orders");
      for (let i = 0; i < DOCS; i += 100) await orders.insertMany(Array.from({ length: 100 }, (_, j) => ({ i: i + j })));
      await waitFor(async () => (await orders.countDocuments({ seq: { $exists: true } })) === DOCS, 120_000, "not every document was numbered");
      const numbers = (await orders.find({}, { projection: { _id: 0, seq: 1 } }).toArray()).map((d) => Number(d.seq)).sort((a, b) => a - b);
      assert.deepEqual(numbers, Array.from({ length: DOCS }, (_, i) => i + 1), "1..N, each once");
    } finally {
      sidecar.kill("SIGTERM");
      assert.equal(await exited, 0, `SIGTERM: graceful exit 0:\n${logs.slice(-10).join("\n")}`);
      await client.db(db).dropDatabase();
    }
    assert.ok(logs.some((line) => line.includes("mongo-seq sidecar stopped")), logs.slice(-5).join("\n"));
  });
}
