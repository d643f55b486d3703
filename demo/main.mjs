// mongo-seq demo. Starts the embedded MongoDB test server (or uses MONGODB_URI), shows the
// pattern mongo-seq packages, and stops everything it started.
import { MongoClient } from "mongodb";
import { startMongo } from "../tests/harness/mongo.mjs";

const say = (line = "") => console.log(line);

const server = await startMongo();
say(server.embedded ? `MongoDB: embedded test server at ${server.uri}` : "MongoDB: MONGODB_URI");
const client = new MongoClient(server.uri);
try {
  await client.connect();
  const db = client.db(`mongo_seq_demo_${Date.now()}`);

  // MongoDB's tutorial: a counters collection and an atomic $inc per number.
  const getNextSequence = async (name) => {
    const counter = await db
      .collection("counters")
      .findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: "after" });
    return counter.seq;
  };
  const users = db.collection("users");
  await users.insertOne({ _id: await getNextSequence("userid"), name: "Sarah C." });
  await users.insertOne({ _id: await getNextSequence("userid"), name: "Bob D." });

  say("users, numbered through the counters collection:");
  for (const user of await users.find().sort({ _id: 1 }).toArray()) say(`  ${JSON.stringify(user)}`);
  say(`counter: ${JSON.stringify(await db.collection("counters").findOne({ _id: "userid" }))}`);
  if (!server.embedded) await db.dropDatabase();
} finally {
  await client.close();
  await server.stop();
}
