// `npm run bench` (in js/): numbers per second and counter commands per 10,000 numbers for
// several block sizes side by side, against the embedded test server or MONGODB_URI.
// The test server runs commands one at a time and in memory: compare the ratios between
// rows, not the absolute rates, with a real deployment.
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { startMongo, uniqueDbName, countCommands } from "../../tests/harness/mongo.mjs";

const NUMBERS = Number(process.env.BENCH_NUMBERS ?? 10_000);
const BLOCKS = [1, 10, 100, 1000];
const CONCURRENCY = 10; // callers awaiting next() at once on one Sequence

const server = await startMongo();
const client = new MongoClient(server.uri, { monitorCommands: true });
await client.connect();
const commands = countCommands(client);
const db = client.db(uniqueDbName("bench"));

async function measure(label, take) {
  commands.reset();
  const started = process.hrtime.bigint();
  const taken = await take();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (taken !== NUMBERS) throw new Error(`${label}: took ${taken} numbers, expected ${NUMBERS}`);
  return { label, perSecond: NUMBERS / seconds, perTenThousand: (commands.count("findAndModify") * 10_000) / NUMBERS };
}

const rows = [];
try {
  for (const block of BLOCKS) {
    const sequence = new Sequences(db).sequence(`block_${block}`, { block });
    rows.push(
      await measure(`next(), block ${block}`, async () => {
        let started = 0;
        let taken = 0;
        const caller = async () => {
          while (started < NUMBERS) {
            started += 1;
            await sequence.next();
            taken += 1;
          }
        };
        await Promise.all(Array.from({ length: CONCURRENCY }, caller));
        return taken;
      }),
    );
  }
  const many = new Sequences(db).sequence("many");
  rows.push(await measure(`nextMany(${NUMBERS}), block 1`, async () => (await many.nextMany(NUMBERS)).length));
} finally {
  await db.dropDatabase();
  await client.close();
  // The harness unrefs the server process; keep the loop alive until it has exited.
  const keepAlive = setInterval(() => {}, 1000);
  await server.stop();
  clearInterval(keepAlive);
}

const base = rows[0].perSecond;
console.log(`mongo-seq benchmark: ${NUMBERS} numbers per row, ${CONCURRENCY} concurrent callers, ${server.embedded ? "embedded test server" : "MONGODB_URI"}`);
console.log("| how | numbers/s | counter commands per 10,000 numbers | speed vs block 1 |");
console.log("|---|---:|---:|---:|");
for (const row of rows) {
  console.log(`| ${row.label} | ${Math.round(row.perSecond).toLocaleString("en")} | ${row.perTenThousand} | ${(row.perSecond / base).toFixed(1)}× |`);
}
