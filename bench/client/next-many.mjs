// nextMany(1000): round trips per call (goal: 1) and numbers/s, on a block-1 sequence.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { countCommands } from "../../tests/harness/mongo.mjs";
import { median } from "../lib/stats.mjs";

export async function runNextMany({ uri, dbName, report, calls = 30 }) {
  const client = new MongoClient(uri, { monitorCommands: true });
  await client.connect();
  const commands = countCommands(client);
  const db = client.db(dbName);
  try {
    const sequence = new Sequences(db).sequence("many");
    await sequence.nextMany(1000); // creates the counter (upsert) and warms up
    commands.reset();
    const rates = [];
    for (let i = 0; i < calls; i++) {
      const started = performance.now();
      const numbers = await sequence.nextMany(1000);
      rates.push(1000 / ((performance.now() - started) / 1000));
      if (numbers.length !== 1000 || numbers[999] !== numbers[0] + 999) throw new Error("nextMany(1000) did not return 1000 consecutive numbers");
    }
    const roundTrips = Object.values(commands.snapshot()).reduce((a, b) => a + b, 0) / calls;
    report.add("client.nextmany1000.round_trips", roundTrips, "commands/call", "nextMany(1000): commands per call, all of them (goal: 1)", { server: false });
    report.add("client.nextmany1000.numbers_per_s", median(rates), "numbers/s", "nextMany(1000), median over calls");
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}
