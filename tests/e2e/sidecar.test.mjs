// End to end: the `mongo-seq` binary numbers what plain `mongodb` driver clients insert.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { writeConfig, startSidecar, check } from "./sidecar.mjs";

let mongo;
let client;
before(async () => {
  mongo = await startMongo();
  client = new MongoClient(mongo.uri);
});
after(async () => {
  await client?.close();
  await mongo?.stop();
});

test("5,000 documents from 4 concurrent writers: all numbered, no duplicates, no gaps", async () => {
  const db = uniqueDbName("e2e_5000");
  const coll = client.db(db).collection("orders");
  const seqs = new Sequences(client.db(db)); // reads numbers back the way an application would
  const sidecar = await startSidecar(writeConfig(mongo.uri, db));
  const started = Date.now();
  try {
    const writers = [0, 1, 2, 3].map(async (writer) => {
      const writerClient = new MongoClient(mongo.uri);
      const ids = [];
      try {
        const mine = writerClient.db(db).collection("orders");
        for (let i = 0; i < 1250; i++) {
          const { insertedId } = await mine.insertOne({ writer, i });
          ids.push(insertedId);
        }
      } finally {
        await writerClient.close();
      }
      return ids;
    });
    const ids = (await Promise.all(writers)).flat();
    assert.equal(ids.length, 5000);

    // Read every number back (in parallel chunks); each document keeps the number it got.
    const got = [];
    for (let i = 0; i < ids.length; i += 250) {
      got.push(...(await Promise.all(ids.slice(i, i + 250).map((id) => seqs.waitForNumber(coll, id, { field: "seq", timeoutMs: 60_000 })))));
    }
    const seconds = (Date.now() - started) / 1000;
    console.log(`5,000 inserted and numbered in ${seconds.toFixed(1)} s (${Math.round(5000 / seconds)} docs/s)`);
    assert.equal(new Set(got.map(Number)).size, 5000, "every document has its own number");

    // Per writer, numbers follow that writer's insert order (the stream's commit order).
    const docs = await coll.find({}, { sort: { writer: 1, i: 1 } }).toArray();
    for (let w = 0; w < 4; w++) {
      const seqs = docs.filter((d) => d.writer === w).map((d) => Number(d.seq));
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), `writer ${w}'s numbers increase`);
    }

    const json = check(mongo.uri, db, ["--json"]);
    assert.equal(json.status, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.documents, 5000);
    assert.equal(report.numbered, 5000);
    assert.equal(report.unnumbered, 0);
    assert.equal(report.duplicates, 0);
    assert.equal(report.gaps, 0);
    assert.equal(report.largest, 5000);
    assert.equal(report.counters_ok, true);
    const line = check(mongo.uri, db, ["--gapless"]);
    assert.equal(line.status, 0, line.stderr);
    assert.match(line.stdout, /5000 documents, 5000 numbered, 0 unnumbered, 0 duplicates, 0 gaps, largest 5000/);

    // The HTTP endpoint.
    const health = await (await fetch(`${sidecar.http}/healthz`)).json();
    assert.equal(health.status, "ok");
    assert.equal(health.triggers[`${db}.orders.seq`].state, "running");
    const metrics = await (await fetch(`${sidecar.http}/metrics`)).text();
    const numbered = metrics.match(new RegExp(`mongo_seq_documents_numbered_total\\{trigger="${db}.orders.seq"\\} (\\d+)`));
    assert.equal(Number(numbered?.[1]), 5000, metrics);
    const batches = Number(metrics.match(/mongo_seq_batches_total\{[^}]*\} (\d+)/)?.[1]);
    const reservations = Number(metrics.match(/mongo_seq_commands_total\{command="findAndModify"[^}]*\} (\d+)/)?.[1]);
    console.log(`${batches} batches, ${reservations} reservations for 5,000 documents`);
    assert.ok(reservations <= batches, "at most one reservation per batch (unscoped)");
  } finally {
    sidecar.child.kill("SIGTERM");
    assert.equal(await sidecar.exited, 0, "graceful shutdown exits 0");
    await client.db(db).dropDatabase();
  }
});
