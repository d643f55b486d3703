#!/usr/bin/env node
// The change-stream consumer's limit: the least any numberer reading a change stream must do on
// a server. It reads the stream in batches of 1,000 (raw `aggregate`/`getMore`, the next batch's
// getMore sent while the current batch is written: read-ahead) and writes one `update` per batch
// setting each document's number from a count in memory: no counter, no resume token, no checks
// (nothing survives a crash or a second instance). Written for the benchmark only.
//
//   node bench/sidecar/stream-limit.mjs URI DB COLLECTION FIELD [START_AFTER_TOKEN_JSON]
//
// Prints `opening` before it opens its stream (a drain is timed from there: the aggregate that
// opens it may already bring the first batch), `watching` once it is open, then `numbered N`
// after every batch.
import { MongoClient } from "mongodb";

const BATCH = 1000;
const MAX_AWAIT_MS = 500; // the sidecar's default max_await_ms

const [uri, dbName, collectionName, field, startAfter] = process.argv.slice(2);
const client = await MongoClient.connect(uri);
const db = client.db(dbName);
let stopping = false;
process.once("SIGTERM", () => (stopping = true));

// Cursor ids stay int64 (`promoteLongs: false`), as getMore needs them back.
const raw = { promoteLongs: false };
const changeStream = startAfter ? { startAfter: JSON.parse(startAfter) } : {};
console.log("opening");
const opened = await db.command(
  { aggregate: collectionName, pipeline: [{ $changeStream: changeStream }, { $match: { operationType: "insert" } }], cursor: { batchSize: BATCH } },
  raw,
);
const cursorId = opened.cursor.id;
console.log("watching");

const read = () =>
  db.command({ getMore: cursorId, collection: collectionName, batchSize: BATCH, maxTimeMS: MAX_AWAIT_MS }, raw).then((reply) => reply.cursor.nextBatch);

let numbered = 0;
let batch = opened.cursor.firstBatch;
while (!stopping) {
  const next = read(); // read-ahead: one getMore in flight while the batch is written
  if (batch.length > 0) {
    const updates = batch.map((event, k) => ({ q: { _id: event.documentKey._id }, u: { $set: { [field]: numbered + k + 1 } } }));
    await db.command({ update: collectionName, updates, ordered: false });
    numbered += batch.length;
    console.log(`numbered ${numbered}`);
  }
  batch = await next;
}
await db.command({ killCursors: collectionName, cursors: [cursorId] }).catch(() => {});
await client.close();
