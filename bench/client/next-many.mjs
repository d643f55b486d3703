// nextMany(1000): round trips per call (goal: 1) and numbers/s, on a block-1 sequence; and
// insertMany of 1,000 documents dated in two periods of a yearly series: its commands per call
// (goal: one reservation per period, one insert), counted by the driver's command monitoring.
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
    await insertManyTwoPeriods({ seqs: new Sequences(db), db, commands, report, calls: Math.max(3, Math.round(calls / 3)) });
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}

/** insertMany of 1,000 documents, half dated 2025 and half 2026, into a yearly series. */
async function insertManyTwoPeriods({ seqs, db, commands, report, calls }) {
  const invoices = seqs.sequence("invoices-bench", { reset: "yearly", timeZone: "Europe/Paris", format: "INV-{yyyy}-{seq:06}" });
  const collection = db.collection("invoices_bench");
  const options = { sequence: invoices, field: "number", formatField: "ref", dateField: "issuedAt" };
  const documents = () =>
    Array.from({ length: 1000 }, (_, i) => ({ issuedAt: new Date(i < 500 ? "2025-12-30T12:00:00Z" : "2026-01-02T12:00:00Z") }));
  await seqs.insertMany(collection, documents(), options); // creates both counters; warms up
  commands.reset();
  const rates = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const outcome = await seqs.insertMany(collection, documents(), options);
    rates.push(1000 / ((performance.now() - started) / 1000));
    if (outcome.insertedCount !== 1000 || new Set(outcome.periods).size !== 2) throw new Error("insertMany over two periods did not insert 1000 documents in 2 periods");
  }
  const counts = commands.snapshot();
  const per = (name) => (counts[name] ?? 0) / calls;
  report.add("client.insertmany1000.two_periods.reservations", per("findAndModify"), "commands/call", "insertMany of 1,000 documents in two periods of a yearly series: reservations (findAndModify) per call (goal: one per period)", { server: false });
  report.add("client.insertmany1000.two_periods.inserts", per("insert"), "commands/call", "the same: insert commands per call (the driver splits at its maxWriteBatchSize)", { server: false });
  report.add("client.insertmany1000.two_periods.commands", Object.values(counts).reduce((a, b) => a + b, 0) / calls, "commands/call", "the same: every command per call", { server: false });
  report.add("client.insertmany1000.two_periods.docs_per_s", median(rates), "docs/s", "the same: documents per second, median over calls");
}
