// The sidecar's default batching side by side with the batch sizes that bound it:
// flat out, 4 writers insert `docs` documents on a fresh server per trial while the consumer
// runs, and the default (batch 1000) and batch 100 are compared with the bulk-update limit of a
// live run (the same inserts with no consumer, then one `update` per 1,000 documents: live.mjs;
// a consumer numbering as documents arrive may beat it); at 500 inserts/s the
// latency (insertOne() → number visible) of the default against batch size 1, default and
// gapless, and the change-stream consumer's limit's own (the floor the server and the harness
// set). Rounds interleaved (order reversed every other round), each ratio against the limit
// or batch 1 of its own round, the median reported; command counts beside every rate.
import { liveOnce } from "./live.mjs";
import { latencyOnce } from "./latency.mjs";
import { totalCommands } from "./documents.mjs";
import { median } from "../lib/stats.mjs";

const RATE = 500;

const FLAT_OUT = [
  { key: "limit", config: { consumer: "limit" }, who: "bulk-update limit (the inserts alone, then one update per 1,000 documents)" },
  { key: "consumer", config: { consumer: "consumer" }, who: "change-stream consumer's limit (stream read in batches of 1,000 with read-ahead, one update per batch, nothing else)" },
  { key: "b1000", config: { consumer: "sidecar", batch: 1000 }, who: "sidecar, default batching (batch 1000)" },
  { key: "b100", config: { consumer: "sidecar", batch: 100 }, who: "sidecar batch 100" },
  { key: "b1000.gapless", config: { consumer: "sidecar", batch: 1000, gapless: true }, who: "sidecar gapless, default batching (batch 1000)" },
];

const LATENCY = [
  { key: "b1000", config: { batch: 1000 }, who: "sidecar, default batching (batch 1000)" },
  { key: "b1", config: { batch: 1 }, who: "sidecar batch 1" },
  { key: "b1000.gapless", config: { batch: 1000, gapless: true }, who: "sidecar gapless, default batching (batch 1000)" },
  { key: "b1.gapless", config: { batch: 1, gapless: true }, who: "sidecar gapless batch 1" },
  // What the server and this harness add to any numberer's latency (insert, stream, update, the
  // reader's polling): the floor under the sidecar's p50 and p99.
  { key: "consumer", config: { consumer: "consumer" }, who: "change-stream consumer's limit (reads as they come, one update per read)" },
];

/** One round of every row (in `order`), with `bin` as the sidecar binary (default: the release build). */
export async function batchingRound({ docs, seconds, reverse = false, bin }) {
  const flat = {};
  for (const row of reverse ? [...FLAT_OUT].reverse() : FLAT_OUT) {
    const run = await liveOnce({ ...row.config, docs, capSeconds: 120, bin });
    flat[row.key] = run;
    console.error(`  flat out ${row.key}: ${Math.round(run.rate)} docs/s, tail ${run.tailSeconds.toFixed(2)} s, ${totalCommands(run.commands)} commands`);
  }
  const latency = {};
  for (const row of reverse ? [...LATENCY].reverse() : LATENCY) {
    const run = await latencyOnce({ consumer: "sidecar", ...row.config, rate: RATE, seconds, bin });
    latency[row.key] = run;
    console.error(`  ${RATE}/s ${row.key}: p50 ${run.p50.toFixed(1)} ms, p99 ${run.p99.toFixed(1)} ms, ${run.cmdsPerDoc.toFixed(3)} commands/doc`);
  }
  return { flat, latency };
}

/** The figures of `rounds` (from {@link batchingRound}) into `report`, prefixed `sidecar.batching.`. */
export function reportBatching({ rounds, docs, report }) {
  const name = (rest) => `sidecar.batching.${rest}`;
  const n = rounds.length;
  for (const row of FLAT_OUT) {
    const runs = rounds.map((r) => r.flat[row.key]);
    const at = `flat out, ${docs} documents by 4 writers, median of ${n} round(s)`;
    report.add(name(`flat.${row.key}.docs_per_s`), median(runs.map((r) => r.rate)), "docs/s", `${row.who}, ${at}: numbered/s from the first insert to the last number`);
    report.add(name(`flat.${row.key}.tail_s`), median(runs.map((r) => r.tailSeconds)), "s", `${row.who}, ${at}: last insert → every document numbered`);
    report.add(name(`flat.${row.key}.cmds_per_doc`), median(runs.map((r) => totalCommands(r.commands) / r.numbered)), "commands/doc", `${row.who}, ${at}: every command on the wire per document (getMore included)`, { server: false });
    report.add(name(`flat.${row.key}.getmores_per_doc`), median(runs.map((r) => (r.commands.commands.getMore ?? 0) / r.numbered)), "getMore/doc", `${row.who}, ${at}: stream reads per document`, { server: false });
    if (row.key !== "limit") {
      const ratios = rounds.map((r) => r.flat[row.key].rate / r.flat.limit.rate);
      report.add(name(`flat.${row.key}.vs_limit`), median(ratios), "x", `${row.who} ÷ the bulk-update limit of the same round, ${at}`);
    }
    if (row.key !== "limit" && row.key !== "consumer") {
      const vsConsumer = rounds.map((r) => r.flat[row.key].rate / r.flat.consumer.rate);
      report.add(name(`flat.${row.key}.vs_consumer`), median(vsConsumer), "x", `${row.who} ÷ the change-stream consumer's limit of the same round, ${at}`);
      const batches = runs.map((r) => r.numbered / r.batches);
      report.add(name(`flat.${row.key}.docs_per_batch`), median(batches), "docs/batch", `${row.who}, ${at}: documents per numbered batch`, { server: false });
    }
  }
  for (const row of LATENCY) {
    const runs = rounds.map((r) => r.latency[row.key]);
    const at = `${RATE} inserts/s planned (${Math.round(median(runs.map((r) => r.insertRate)))}/s achieved), median of ${n} round(s)`;
    for (const p of ["p50", "p99"]) {
      report.add(name(`r${RATE}.${row.key}.${p}_ms`), median(runs.map((r) => r[p])), "ms", `${row.who}: insertOne() → number visible, ${p}, ${at}`);
    }
    report.add(name(`r${RATE}.${row.key}.cmds_per_doc`), median(runs.map((r) => r.cmdsPerDoc)), "commands/doc", `${row.who}, ${at}: every command on the wire per document (getMore included)`, { server: false });
    if (row.key !== "consumer") report.add(name(`r${RATE}.${row.key}.docs_per_batch`), median(runs.map((r) => r.docsPerBatch)), "docs/batch", `${row.who}, ${at}: documents per numbered batch`, { server: false });
  }
  for (const mode of ["", ".gapless"]) {
    const ratios = rounds.map((r) => r.latency[`b1000${mode}`].p50 / r.latency[`b1${mode}`].p50);
    report.add(name(`r${RATE}.b1000${mode}.p50.vs_b1`), median(ratios), "x", `sidecar${mode ? " gapless" : ""}: default batching's p50 ÷ batch 1's of the same round, ${RATE} inserts/s`);
  }
}

/** The section: `rounds` interleaved rounds on the release build. */
export async function runBatchingSection({ options, report }) {
  const { batchingDocs: docs, latencySeconds: seconds } = options;
  const rounds = [];
  for (let i = 0; i < options.batchingRounds; i++) {
    console.error(`sidecar batching, round ${i + 1} of ${options.batchingRounds}: flat out (${docs} documents), ${RATE}/s (${seconds} s)`);
    rounds.push(await batchingRound({ docs, seconds, reverse: i % 2 === 1 }));
  }
  reportBatching({ rounds, docs, report });
}
