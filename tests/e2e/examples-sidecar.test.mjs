// examples/sidecar/mongo-seq.toml, the annotated config: valid (--check-config), and numbering
// as its comments say when the sidecar runs with it. Only its database name (`shop`, made
// unique here) and HTTP port (a free one) are changed; the server comes from MONGO_SEQ_URI.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uniqueDbName } from "../harness/mongo.mjs";
import { repoRoot } from "../harness/runtimes.mjs";
import { BIN, useServerAndClient, startSidecar } from "./sidecar.mjs";

const ctx = useServerAndClient();

test("examples/sidecar/mongo-seq.toml: validates, then numbers orders per tenant and students on the recipe's counter", async () => {
  const dbName = uniqueDbName("example_sidecar");
  const original = readFileSync(join(repoRoot, "examples", "sidecar", "mongo-seq.toml"), "utf8");
  assert.match(original, /port = 9464/);
  const config = join(mkdtempSync(join(tmpdir(), "mongo-seq-example-")), "mongo-seq.toml");
  writeFileSync(config, original.replaceAll('"shop', `"${dbName}`).replace("port = 9464", "port = 0"));
  const env = { ...process.env, MONGO_SEQ_URI: ctx.server.uri };

  const checked = spawnSync(BIN, ["sidecar", "--config", config, "--check-config"], { encoding: "utf8", env });
  assert.equal(checked.status, 0, checked.stderr);

  const db = ctx.client.db(dbName);
  await db.collection("counters").insertOne({ _id: `${dbName}.students`, seq_value: 41 }); // the recipe's counter
  process.env.MONGO_SEQ_URI = ctx.server.uri;
  const sidecar = await startSidecar(config);
  try {
    await db.collection("orders").insertMany([{ tenantId: "acme" }, { tenantId: "globex" }, { tenantId: "acme" }]);
    await db.collection("students").insertMany([{ name: "Ada" }, { name: "Alan" }]);
    const deadline = Date.now() + 60_000;
    const numbered = async () =>
      (await db.collection("orders").countDocuments({ orderRef: { $exists: true } })) + (await db.collection("students").countDocuments({ studentId: { $exists: true } }));
    while ((await numbered()) < 5) {
      if (Date.now() > deadline) throw new Error(`not numbered:\n${sidecar.logs.join("\n")}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const orders = await db.collection("orders").find().sort({ _id: 1 }).toArray();
    assert.deepEqual(orders.map((o) => [o.tenantId, o.orderNo, o.orderRef]), [
      ["acme", 1, "ORD-000001"],
      ["globex", 1, "ORD-000001"],
      ["acme", 2, "ORD-000002"],
    ]);
    const students = await db.collection("students").find().sort({ _id: 1 }).toArray();
    assert.deepEqual(students.map((s) => s.studentId), [42, 43]);
    assert.equal((await db.collection("counters").findOne({ _id: `${dbName}.students` })).seq_value, 43);
  } finally {
    delete process.env.MONGO_SEQ_URI;
    sidecar.child.kill("SIGTERM");
    await sidecar.exited;
  }
});
