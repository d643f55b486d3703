// `npm run bench:client` (in js/): the package's client-side figures, side by side in one run.
//   warm   ns per warm next() (block 10^6: no round trip) through the package and through a
//          10-line plain-JS hi/lo (the reference), over a stand-in Db, interleaved rounds
//   cpu    the package's CPU per reservation: next() at block 1 over a stand-in Db whose
//          findOneAndUpdate answers at once (plan, Wasm glue, conversions, async code)
//   server the tutorial's getNextSequence against sequence({ block }).next() for blocks 1, 100,
//          1000 with 1 and 10 concurrent callers on the embedded test server (or MONGODB_URI),
//          interleaved rounds, median ratio; findAndModify per number by command monitoring;
//          nextMany(1000)'s round trips
//   size   the Wasm module, raw and gzip
// Prints a table and one line per figure, `BENCH <name> <value> <unit>`.
// Usage: node bench/client.mjs [warm,cpu,server,size] [--rounds N]
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { BSON, MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { startMongo, uniqueDbName, countCommands } from "../../tests/harness/mongo.mjs";

const args = process.argv.slice(2);
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 5;
const parts = new Set((args.find((a) => !a.startsWith("--") && a !== args[roundsAt + 1]) ?? "warm,cpu,server,size").split(","));
const BLOCKS = [1, 100, 1000];
const CALLERS = [1, 10];
/** Numbers taken per row: enough for a few refills of the largest block. */
const NUMBERS = { tutorial: 1000, 1: 1000, 100: 20_000, 1000: 100_000 };

const figures = [];
function report(name, value, unit, what) {
  figures.push({ name, value, unit, what });
  console.error(`  ${name} = ${format(value)} ${unit}`);
}
const format = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toPrecision(3));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The reference: hi/lo in plain JS, the way an application writes it by hand. */
class PlainHiLo {
  constructor(counters, name, block) {
    Object.assign(this, { counters, name, block, next: 1, last: 0 });
  }
  async take() {
    if (this.next > this.last) {
      const counter = await this.counters.findOneAndUpdate({ _id: this.name }, { $inc: { seq: this.block } }, { upsert: true, returnDocument: "after" });
      this.last = Number(counter.seq);
      this.next = this.last - this.block + 1;
    }
    return this.next++;
  }
}

/** A Db whose counters answer findOneAndUpdate at once, as the driver would ({ _id, seq: Long }). */
function standInDb() {
  const seqs = new Map();
  const counters = {
    collectionName: "counters",
    async findOneAndUpdate(filter, update) {
      const id = String(filter._id);
      const seq = (seqs.get(id) ?? 0n) + BigInt(String(update.$inc.seq));
      seqs.set(id, seq);
      return { _id: id, seq: BSON.Long.fromBigInt(seq) };
    },
  };
  return { collection: () => counters };
}

async function nsPerCall(calls, take) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await take();
  return Number(process.hrtime.bigint() - started) / calls;
}

async function warm() {
  const db = standInDb();
  const sequence = new Sequences(db).sequence("warm", { block: 1_000_000 });
  const plain = new PlainHiLo(db.collection("counters"), "plain", 1_000_000);
  const calls = 200_000;
  await nsPerCall(50_000, () => sequence.next());
  await nsPerCall(50_000, () => plain.take());
  const pkg = [];
  const ref = [];
  for (let round = 0; round < ROUNDS; round++) {
    pkg.push(await nsPerCall(calls, () => sequence.next()));
    ref.push(await nsPerCall(calls, () => plain.take()));
  }
  report("client.next_warm_ns", median(pkg), "ns", "warm next() through the package (median of rounds)");
  report("client.next_warm.hilo_js_ns", median(ref), "ns", "the same with a plain-JS hi/lo");
  report("client.next_warm.vs_hilo_js", median(pkg.map((ns, i) => ns / ref[i])), "x", "package ÷ plain JS (goal ≤ 3)");
}

async function cpu() {
  const sequence = new Sequences(standInDb()).sequence("cpu", { block: 1 });
  await nsPerCall(5_000, () => sequence.next());
  const runs = [];
  for (let round = 0; round < ROUNDS; round++) runs.push(await nsPerCall(20_000, () => sequence.next()));
  report("client.reservation_cpu_us", median(runs) / 1000, "µs", "package CPU per reservation (block 1 over a stand-in Db)");
}

/** `callers` loops taking numbers until `count` are taken; numbers/s and findAndModify per number. */
async function measure(commands, callers, count, take) {
  commands.reset();
  let started = 0;
  const loop = async () => {
    while (started < count) {
      started += 1;
      await take();
    }
  };
  const at = performance.now();
  await Promise.all(Array.from({ length: callers }, loop));
  const seconds = (performance.now() - at) / 1000;
  return { perSecond: count / seconds, roundTrips: commands.count("findAndModify") / count };
}

async function server() {
  const mongo = await startMongo();
  const client = new MongoClient(mongo.uri, { monitorCommands: true });
  await client.connect();
  const commands = countCommands(client);
  const db = client.db(uniqueDbName("bench_client"));
  const counters = db.collection("counters");
  let serial = 0;
  const tutorial = async () => {
    const name = `tutorial-${(serial += 1)}`;
    await counters.insertOne({ _id: name, seq: 0 });
    return async () => (await counters.findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { returnDocument: "after" })).seq;
  };
  const rows = {};
  try {
    const warmUp = await tutorial();
    for (let i = 0; i < 300; i++) await warmUp();
    const warmSeq = new Sequences(db).sequence("warm-up", { block: 10 });
    await measure(commands, 10, 3000, () => warmSeq.next());
    for (let round = 0; round < ROUNDS; round++) {
      for (const callers of CALLERS) {
        const order = ["tutorial", ...BLOCKS];
        if (round % 2 === 1) order.reverse();
        for (const what of order) {
          const take = what === "tutorial" ? await tutorial() : ((s) => () => s.next())(new Sequences(db).sequence(`b${what}-${(serial += 1)}`, { block: what }));
          (rows[`${what}.c${callers}`] ??= []).push(await measure(commands, callers, NUMBERS[what], take));
        }
      }
    }
    const many = new Sequences(db).sequence("many");
    commands.reset();
    await many.nextMany(1000);
    report("client.nextmany1000.round_trips", Object.values(commands.snapshot()).reduce((a, b) => a + b, 0), "commands", "nextMany(1000): commands sent (goal 1)");
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
    const keepAlive = setInterval(() => {}, 1000);
    await mongo.stop();
    clearInterval(keepAlive);
  }
  for (const callers of CALLERS) {
    const base = rows[`tutorial.c${callers}`];
    report(`client.tutorial.c${callers}.numbers_per_s`, median(base.map((r) => r.perSecond)), "numbers/s", `tutorial, ${callers} caller(s)`);
    for (const block of BLOCKS) {
      const row = rows[`${block}.c${callers}`];
      report(`client.block${block}.c${callers}.numbers_per_s`, median(row.map((r) => r.perSecond)), "numbers/s", `block ${block}, ${callers} caller(s)`);
      const ratio = median(row.map((r, i) => r.perSecond / base[i].perSecond));
      report(`client.block${block}.c${callers}.vs_tutorial`, ratio, "x", `÷ tutorial at ${callers} caller(s), median of ${ROUNDS} rounds`);
      report(`client.block${block}.c${callers}.share_of_limit`, (100 * ratio) / block, "%", `that ratio ÷ ${block} (the round-trip limit)`);
      report(`client.block${block}.c${callers}.round_trips_per_number`, median(row.map((r) => r.roundTrips)), "findAndModify/number", "counter commands per number");
    }
  }
}

function size() {
  const wasm = readFileSync(new URL("../dist/mongo_seq_wasm_bg.wasm", import.meta.url));
  report("wasm.bytes", wasm.length, "bytes", "the Wasm module after wasm-opt (goal ≤ 120,000)");
  report("wasm.gzip_bytes", gzipSync(wasm, { level: 9 }).length, "bytes", "the same, gzip -9");
}

if (parts.has("size")) size();
if (parts.has("warm")) await warm();
if (parts.has("cpu")) await cpu();
if (parts.has("server")) await server();

console.log(`mongo-seq client benchmark: ${ROUNDS} rounds, node ${process.version}, load average ${(await import("node:os")).loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log("| figure | value | unit | what |");
console.log("|---|---:|---|---|");
for (const f of figures) console.log(`| \`${f.name}\` | ${format(f.value)} | ${f.unit} | ${f.what} |`);
for (const f of figures) console.log(`BENCH ${f.name} ${format(f.value)} ${f.unit}`);
