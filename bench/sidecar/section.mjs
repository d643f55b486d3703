// The sidecar section: drain and live runs of the Atlas-trigger recipe, the sidecar (batch
// 1/100/1000, default and gapless; drains of a sealed gapless series too) and the raw
// bulk-update limit, over the links of lib/servers.mjs; figures as ratios of runs made in this
// invocation.
import { LINKS, withServer, withProxy, pingMs } from "../lib/servers.mjs";
import { drainOnce } from "./drain.mjs";
import { liveOnce, WRITERS } from "./live.mjs";
import { totalCommands } from "./documents.mjs";

/** The fields a sealed drain seals: every field of the orders (documents.mjs). */
const SEAL_FIELDS = ["item", "qty"];

/** Figure-name stem of a consumer configuration. */
function stem({ consumer, batch, gapless, on, sealFields }) {
  if (consumer === "recipe") return "recipe";
  if (consumer === "consumer") return "consumer";
  if (consumer === "limit") return `limit.b${batch}`;
  return `b${batch}${sealFields ? ".sealed" : gapless ? ".gapless" : ""}${on === "match" ? ".match" : ""}`;
}

function describe({ consumer, batch, gapless, on, sealFields }) {
  if (consumer === "recipe") return "Atlas-trigger recipe";
  if (consumer === "consumer") return "change-stream consumer's limit (stream read in batches of 1,000 with read-ahead, one update per batch, nothing else)";
  if (consumer === "limit") return `bulk-update limit, batches of ${batch}`;
  const sealed = sealFields ? `, sealed (seal_fields ${sealFields.join(", ")})` : "";
  return `sidecar batch ${batch}${gapless ? " gapless" : ""}${sealed}${on === "match" ? ', on = "match" (orders issued by an update)' : ""}`;
}

/** Lease traffic (acquire, renew, state load) goes to the state collection, by time, not batch. */
const LEASE = new Set(["findAndModify mongo_seq_state", "find mongo_seq_state"]);

/**
 * The numbering's own commands: those naming a collection (so not getMore, whose value is a
 * cursor id, nor heartbeats), lease traffic left out; the resume-token write stays in.
 */
function numberingCommands(counts) {
  return Object.entries(counts.byCollection).reduce((sum, [key, n]) => (LEASE.has(key) ? sum : sum + n), 0);
}

const SIDECARS = (full) => [
  { consumer: "sidecar", batch: 1, gapless: false },
  { consumer: "sidecar", batch: 100, gapless: false },
  { consumer: "sidecar", batch: 1000, gapless: false },
  ...(full ? [{ consumer: "sidecar", batch: 1, gapless: true }] : []),
  { consumer: "sidecar", batch: 100, gapless: true },
  { consumer: "sidecar", batch: 1000, gapless: true },
];

/** Which configurations run over which link (quick mode keeps the slow ones to rtt0). */
function drainPlan(full) {
  const recipe = { consumer: "recipe" };
  const consumer = { consumer: "consumer" };
  const limit = (batch) => ({ consumer: "limit", batch });
  const sidecar = (batch, gapless = false) => ({ consumer: "sidecar", batch, gapless });
  // Numbering on issue beside numbering on insert, on the loopback link.
  const issued = { consumer: "sidecar", batch: 1000, gapless: false, on: "match" };
  // A sealed series right after the gapless drain it is compared with (which runs again right
  // after it: reportSealedBesideGapless).
  const sealed = { consumer: "sidecar", batch: 1000, gapless: true, sealFields: SEAL_FIELDS };
  if (full) {
    const all = [limit(100), limit(1000), consumer, recipe, ...SIDECARS(true), sealed];
    return { rtt0: [...all, issued], rtt1ms: all, rtt4ms: all };
  }
  return {
    rtt0: [limit(1000), consumer, recipe, ...SIDECARS(false), sealed, issued],
    rtt1ms: [limit(1000), consumer, recipe, sidecar(100), sidecar(1000), sidecar(1000, true), sealed],
    rtt4ms: [limit(1000), consumer, recipe, sidecar(1000)],
  };
}

/**
 * What sealing costs: the sealed drain ÷ the gapless drains run just before and after it, and
 * (loopback) the numbering commands per batch of each, by command.
 */
function reportSealedBesideGapless({ report, config, sealed, gapless, suffix, link }) {
  const name = `sidecar.${stem(config)}.drain`;
  const reference = (gapless[0].rate + gapless[1].rate) / 2;
  report.add(`${name}.vs_unsealed${suffix}`, sealed.rate / reference, "x",
    `${describe(config)} ÷ the same unsealed (gapless, mean of a drain before and after it: ${gapless.map((g) => Math.round(g.rate)).join(" and ")} docs/s), ${link.label}`);
  if (suffix) return;
  // Per numbering batch of 1,000 (a stream batch the sidecar reads may hold several); resume-token
  // writes left out too: they follow time, not batches (a slower drain makes more).
  const perBatch = (run) => (numberingCommands(run.commands) - (run.commands.byCollection["update mongo_seq_state"] ?? 0)) / (run.numbered / config.batch);
  const byCommand = (run) => Object.entries(run.commands.byCollection).filter(([key]) => !LEASE.has(key)).map(([key, n]) => `${key} ${n}`).join(", ");
  for (const [label, run] of [["sealed", sealed], ["gapless", gapless[0]]]) {
    console.error(`  ${label} drain of ${run.numbered}: ${byCommand(run)}`);
  }
  report.add(`${name}.cmds_per_batch`, perBatch(sealed), "commands/batch", `${describe(config)}, drain: numbering commands per ${config.batch} documents (all but getMore, heartbeats, lease, resume-token writes; start-up included)`, { server: false });
  report.add("sidecar.b1000.gapless.drain.cmds_per_batch", perBatch(gapless[0]), "commands/batch", "sidecar batch 1000 gapless, drain: the same", { server: false });
  report.add(`${name}.extra_cmds_per_batch`, perBatch(sealed) - perBatch(gapless[0]), "commands/batch", `${describe(config)}, drain: numbering commands per ${config.batch} documents beyond the unsealed drain's`, { server: false });
}

export async function runSidecarSection({ options, report }) {
  const { drainDocs, drainCapSeconds, liveDocs, full } = options;
  const rss = [];

  // What each link adds, measured.
  await withServer("links", async ({ uri }) => {
    report.add("link.direct.ping_ms", await pingMs(uri), "ms", "ping round trip, bench → server directly (loopback)");
    for (const [name, link] of Object.entries(LINKS)) {
      const ms = await withProxy(uri, link.delayMs, (proxy) => pingMs(proxy.uri));
      report.add(`link.${name}.ping_ms`, ms, "ms", `ping round trip through the proxy: ${link.label}`);
    }
  });

  // Live: writers inserting while the consumer runs (counting proxy, no delay).
  console.error(`sidecar live: ${liveDocs} documents per run`);
  const live = {};
  for (const config of [{ consumer: "recipe" }, ...SIDECARS(full)]) {
    const run = await liveOnce({ ...config, docs: liveDocs, capSeconds: drainCapSeconds });
    live[stem(config)] = run;
    if (config.consumer === "sidecar") rss.push(run.rssMiB);
    const name = `sidecar.${stem(config)}`;
    const perDoc = totalCommands(run.commands) / run.numbered;
    report.add(`${name}.live.docs_per_s`, run.rate, "docs/s", `${describe(config)}, live: ${run.numbered}${run.capped ? ` of ${liveDocs} (capped)` : ""} inserted by ${WRITERS} writers, numbered/s`);
    report.add(`${name}.cmds_per_doc`, perDoc, "commands/doc", `${describe(config)}, live: every command on the wire per numbered document (getMore, heartbeats included)`, { server: false });
    if (config.consumer === "sidecar") {
      report.add(`${name}.vs_recipe`, run.rate / live.recipe.rate, "x", `${describe(config)} ÷ recipe, live (both bounded by the server's inserts)`);
      report.add(`${name}.getmores_per_batch`, (run.commands.commands.getMore ?? 0) / run.batches, "getMore/batch", `${describe(config)}, live: getMores per numbered batch (${run.batches} batches)`, { server: false });
      report.add(`${name}.cmds_per_batch`, numberingCommands(run.commands) / run.batches, "commands/batch", `${describe(config)}, live: numbering commands per batch (all but getMore, heartbeats, lease), token write included`, { server: false });
      const waited = Object.values(run.commands.waitedUs).reduce((a, b) => a + b, 0);
      report.add(`${name}.getmore_time_pct`, ((run.commands.waitedUs.getMore ?? 0) / waited) * 100, "%", `${describe(config)}, live: share of its time waiting on the server spent in getMore`);
      report.add(`${name}.token_writes_per_batch`, (run.commands.byCollection["update mongo_seq_state"] ?? 0) / run.batches, "writes/batch", `${describe(config)}, live: resume-token writes per batch`, { server: false });
    }
  }
  report.add("sidecar.live.insert_per_s", live["b1000"].insertRate, "inserts/s", "what the writers achieved during the batch-1000 live run (the bound of every live figure)");
  report.add("sidecar.b1000.cmds.vs_recipe", totalCommands(live.recipe.commands) / live.recipe.numbered / (totalCommands(live.b1000.commands) / live.b1000.numbered), "x",
    "recipe's commands per document ÷ the sidecar's (batch 1000, live)", { server: false });
  const cpuPer10k = (run) => (run.cpuSeconds / run.numbered) * 10_000;
  report.add("sidecar.cpu_s_per_10k_docs", cpuPer10k(live.b1000), "CPU s", "sidecar batch 1000, live: CPU seconds (user+sys, /proc) per 10,000 documents", { server: false });
  report.add("sidecar.recipe.cpu_s_per_10k_docs", cpuPer10k(live.recipe), "CPU s", "recipe consumer (Node), live: CPU seconds per 10,000 documents", { server: false });
  report.add("sidecar.b1000.cpu.vs_recipe", cpuPer10k(live.recipe) / cpuPer10k(live.b1000), "x", "recipe's CPU per document ÷ the sidecar's (live)", { server: false });
  report.add("sidecar.recipe.rss_mib", live.recipe.rssMiB, "MiB", "recipe consumer (Node): peak RSS", { server: false });

  // Drain: a backlog numbered from the resume point of before the inserts.
  const plan = drainPlan(full);
  for (const [linkName, configs] of Object.entries(plan)) {
    const link = LINKS[linkName];
    const suffix = linkName === "rtt0" ? "" : `.${linkName}`;
    console.error(`sidecar drain, ${link.label}: ${drainDocs} documents per run (cap ${drainCapSeconds} s)`);
    const results = {};
    // The limits (bulk update, stream consumer) run first and again last; their mean is the
    // reference (load drifts).
    const limits = configs.filter((c) => c.consumer === "limit" || c.consumer === "consumer");
    for (const config of [...configs, ...limits]) {
      const run = await drainOnce({ ...config, delayMs: link.delayMs, docs: drainDocs, capSeconds: drainCapSeconds });
      const earlier = results[stem(config)];
      if (earlier) {
        earlier.rate = (earlier.rate + run.rate) / 2;
        continue;
      }
      results[stem(config)] = run;
      if (config.consumer === "sidecar") rss.push(run.rssMiB);
      // The gapless drain again right after the sealed one: their mean is its reference.
      if (config.sealFields) results["b1000.gapless.after"] = await drainOnce({ ...config, sealFields: undefined, delayMs: link.delayMs, docs: drainDocs, capSeconds: drainCapSeconds });
      if (limits.includes(config)) continue; // reported after its second run
      const name = `sidecar.${stem(config)}`;
      const capped = run.capped ? ` (capped at ${drainCapSeconds} s: ${run.numbered} of ${drainDocs})` : "";
      report.add(`${name}.drain.docs_per_s${suffix}`, run.rate, "docs/s", `${describe(config)}, drain of ${drainDocs}, ${link.label}${capped}`);
      if (linkName === "rtt0") {
        report.add(`${name}.drain.cmds_per_doc`, totalCommands(run.commands) / run.numbered, "commands/doc", `${describe(config)}, drain: every command on the wire per document`, { server: false });
        report.add(`${name}.drain.cpu_s_per_10k_docs`, cpuPer10k(run), "CPU s", `${describe(config)}, drain: CPU seconds per 10,000 documents`, { server: false });
      }
    }
    for (const config of limits) {
      report.add(`sidecar.${stem(config)}.drain.docs_per_s${suffix}`, results[stem(config)].rate, "docs/s", `${describe(config)}, ${drainDocs} documents, ${link.label} (mean of a run before and after the others)`);
      if (config.consumer === "consumer" && linkName === "rtt0") {
        report.add("sidecar.consumer.drain.cmds_per_doc", totalCommands(results.consumer.commands) / results.consumer.numbered, "commands/doc", `${describe(config)}, drain: every command on the wire per document`, { server: false });
      }
    }
    for (const config of configs.filter((c) => c.consumer === "sidecar")) {
      const run = results[stem(config)];
      const name = `sidecar.${stem(config)}`;
      report.add(`${name}.drain.vs_recipe${suffix}`, run.rate / results.recipe.rate, "x", `${describe(config)} ÷ recipe, drain, ${link.label}`);
      if (config.on === "match") {
        const onInsert = results[stem({ ...config, on: "insert" })];
        if (onInsert) report.add(`${name}.drain.vs_insert${suffix}`, run.rate / onInsert.rate, "x", `${describe(config)} ÷ the same on insert, drain, ${link.label}`);
      }
      if (results.consumer && config.batch === 1000) {
        report.add(`${name}.drain.vs_consumer${suffix}`, run.rate / results.consumer.rate, "x", `${describe(config)} ÷ the change-stream consumer's limit, drain, ${link.label}`);
      }
      const limit = results[`limit.b${config.batch}`];
      if (limit) report.add(`${name}.drain.vs_limit${suffix}`, run.rate / limit.rate, "x", `${describe(config)} ÷ bulk-update limit (batches of ${config.batch}), drain, ${link.label}`);
      if (config.sealFields) reportSealedBesideGapless({ report, config, sealed: run, gapless: [results["b1000.gapless"], results["b1000.gapless.after"]], suffix, link });
    }
  }
  report.add("sidecar.rss_mib", Math.max(...rss), "MiB", `sidecar: highest peak RSS (VmHWM) over its ${rss.length} runs`, { server: false });
}
