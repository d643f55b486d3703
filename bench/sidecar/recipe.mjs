#!/usr/bin/env node
// The published Atlas-trigger recipe for auto-increment ("insert trigger: findOneAndUpdate the
// counter with $inc and upsert, then updateOne the document"), as a small change-stream
// consumer: one event at a time, like an ordered trigger. Written for the benchmark only.
//
//   node bench/sidecar/recipe.mjs URI DB COLLECTION FIELD [START_AFTER_TOKEN_JSON]
//
// Prints `opening` before its first read opens the stream (a drain is timed from there),
// `watching` once its stream is open, then `numbered N` every 10 documents and whenever
// the stream is idle (an empty getMore: the server waited for an event, up to its default of
// 1 s). It stores no resume token (Atlas does that for a trigger, outside the function): that
// favours the recipe.
import { MongoClient } from "mongodb";

const [uri, dbName, collectionName, field, startAfter] = process.argv.slice(2);
const client = await MongoClient.connect(uri);
const db = client.db(dbName);
const documents = db.collection(collectionName);
const counters = db.collection("counters");
const counterId = `${dbName}.${collectionName}`;
const stream = documents.watch([{ $match: { operationType: "insert" } }], startAfter ? { startAfter: JSON.parse(startAfter) } : {});
let stopping = false;
process.once("SIGTERM", () => (stopping = true));

// The trigger function, as the recipe writes it.
async function onInsert(changeEvent) {
  const docId = changeEvent.fullDocument._id;
  const counter = await counters.findOneAndUpdate({ _id: counterId }, { $inc: { seq: 1 } }, { returnDocument: "after", upsert: true });
  await documents.updateOne({ _id: docId }, { $set: { [field]: counter.seq } });
}

let numbered = 0;
let first = true;
console.log("opening");
while (!stopping) {
  const event = await stream.tryNext();
  if (first) {
    console.log("watching");
    first = false;
  }
  if (event === null) {
    console.log(`numbered ${numbered}`);
    continue;
  }
  await onInsert(event);
  numbered += 1;
  if (numbered % 10 === 0) console.log(`numbered ${numbered}`);
}
await stream.close();
await client.close();
