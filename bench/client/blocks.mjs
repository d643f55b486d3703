// mongo-seq's `sequence(name, { block })` against the tutorial's getNextSequence, with 1 and 10
// concurrent callers, rows interleaved round by round (each round's ratio is taken against the
// tutorial of the same round, and the median over rounds is reported); block 1 at one caller,
// whose ratio sits near 1, from many short interleaved pairs instead (`block1Pairs`).
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";
import { countCommands } from "../../tests/harness/mongo.mjs";
import { tutorialSequence } from "./tutorial.mjs";
import { concurrently, median } from "../lib/stats.mjs";

export const BLOCKS = [1, 25, 100, 1000];
/** Block sizes also measured with `refillAhead: true` (rows `block<N>.ahead`). */
export const BLOCKS_AHEAD = [100, 1000];
/** Block sizes also measured kept at their size, `maxBlock: block` (rows `block<N>.fixed`): what the growth under load adds. */
export const BLOCKS_FIXED = [100];
export const CALLERS = [1, 10];
/** Every row after the tutorial: its figure name, block size and options. */
const ROWS = [
  ...BLOCKS.map((block) => ({ key: `block${block}`, block, options: { block } })),
  ...BLOCKS_AHEAD.map((block) => ({ key: `block${block}.ahead`, block, options: { block, refillAhead: true } })),
  ...BLOCKS_FIXED.map((block) => ({ key: `block${block}.fixed`, block, options: { block, maxBlock: block } })),
];

/** Numbers per chunk of block 1's interleaved comparison with the tutorial at one caller. */
export const PAIR_CHUNK = 20;

/**
 * Block 1 at one caller against the tutorial, both one findAndModify per number: the ratio sits
 * near 1, and a row of a few hundred numbers per round moves with the machine's load by more
 * than the margin. Short chunks of each instead, alternating (the order flipped every pair), on
 * one warm counter each; each pair's ratio (tutorial time ÷ package time), and their median.
 */
async function block1Pairs(db, counters, name, pairs) {
  const tutorial = await tutorialSequence(counters, `tutorial-${name}`);
  const sequence = new Sequences(db).sequence(`block1-${name}`, { block: 1 });
  const rows = [tutorial, () => sequence.next()];
  const elapsed = async (take) => {
    const started = performance.now();
    for (let i = 0; i < PAIR_CHUNK; i++) await take();
    return performance.now() - started;
  };
  for (const take of rows) await elapsed(take); // both counters exist, both paths warm
  const ratios = [];
  for (let pair = 0; pair < pairs; pair++) {
    const [first, second] = pair % 2 === 0 ? rows : [...rows].reverse();
    const [a, b] = [await elapsed(first), await elapsed(second)];
    const [tutorialMs, packageMs] = pair % 2 === 0 ? [a, b] : [b, a];
    ratios.push(tutorialMs / packageMs);
  }
  return ratios;
}

/** Takes `count` numbers with `callers` concurrent loops; returns numbers/s and findAndModify per number. */
async function measure(commands, callers, count, take) {
  commands.reset();
  const started = performance.now();
  await concurrently(callers, count, take);
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: count / seconds, roundTrips: commands.count("findAndModify") / count };
}

/**
 * @param {{ uri: string, dbName: string, suffix: string, numbers: Record<number, number>, rounds: number, pairs: number, report: import("../lib/report.mjs").Report, link: string }} args
 *   pairs: interleaved pairs of short chunks behind block 1 at one caller (`block1Pairs`)
 *   suffix: appended to figure names ("" on loopback, ".rtt1ms" through the latency proxy)
 */
export async function runBlocks({ uri, dbName, suffix, numbers, rounds, pairs, report, link }) {
  const client = new MongoClient(uri, { monitorCommands: true });
  await client.connect();
  const commands = countCommands(client);
  const db = client.db(dbName);
  const counters = db.collection("counters");
  let serial = 0;
  const rows = {}; // key → [{ perSecond, roundTrips }] per round
  const record = (key, result) => (rows[key] ??= []).push(result);
  let block1Ratios;
  try {
    // Warm-up: JIT, connection pool (10 connections), the Wasm module's first calls.
    const warm = await tutorialSequence(counters, "warm");
    await concurrently(10, 200, warm);
    const warmSeq = new Sequences(db).sequence("warm-block", { block: 10 });
    await concurrently(10, 2000, () => warmSeq.next());

    for (let round = 0; round < rounds; round++) {
      for (const callers of CALLERS) {
        const order = ["tutorial", ...ROWS];
        if (round % 2 === 1) order.reverse(); // no row always runs first
        for (const row of order) {
          serial += 1;
          if (row === "tutorial") {
            const next = await tutorialSequence(counters, `tutorial-${serial}`);
            record(`tutorial.c${callers}`, await measure(commands, callers, numbers[1], next));
          } else {
            const sequence = new Sequences(db).sequence(`${row.key}-${serial}`, row.options);
            record(`${row.key}.c${callers}`, await measure(commands, callers, numbers[row.block], () => sequence.next()));
          }
        }
      }
    }
    block1Ratios = await block1Pairs(db, counters, "pairs", pairs);
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }

  for (const callers of CALLERS) {
    const tutorial = rows[`tutorial.c${callers}`];
    report.add(`client.tutorial.c${callers}.numbers_per_s${suffix}`, median(tutorial.map((r) => r.perSecond)), "numbers/s",
      `tutorial getNextSequence, ${callers} caller(s), ${link}`);
    for (const { key: row, block, options } of ROWS) {
      const key = `${row}.c${callers}`;
      const pairwise = block === 1 && callers === 1 && !options.refillAhead && !options.maxBlock;
      const ratios = pairwise ? block1Ratios : rows[key].map((r, round) => r.perSecond / tutorial[round].perSecond);
      const ratio = median(ratios);
      const measured = pairwise ? `median of ${pairs} interleaved pairs of ${PAIR_CHUNK} numbers each` : `median of ${rounds} rounds`;
      const what = options.refillAhead ? `block ${block}, refillAhead` : options.maxBlock ? `block ${block} kept at ${block}` : `block ${block}`;
      report.add(`client.${key}.numbers_per_s${suffix}`, median(rows[key].map((r) => r.perSecond)), "numbers/s",
        `sequence(${JSON.stringify(options).replaceAll('"', "")}).next(), ${callers} caller(s), ${link}`);
      report.add(`client.${key}.vs_tutorial${suffix}`, ratio, "x", `${what}, ${callers} caller(s) ÷ tutorial, same callers, ${link} (${measured})`);
      report.add(`client.${key}.share_of_limit${suffix}`, (ratio / block) * 100, "%",
        `that ratio as a share of the round-trip limit of a block of ${block} (${block}×; over 100 % once the block grew)`);
      if (suffix === "") {
        report.add(`client.${key}.round_trips_per_number`, median(rows[key].map((r) => r.roundTrips)), "findAndModify/number",
          `counter commands per number (driver command monitoring)`, { server: false });
      }
    }
  }
}
