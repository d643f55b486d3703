// Watching the sidecar: the Prometheus rules pass promtool (syntax and their unit tests), and
// every metric the Grafana dashboard and the rules query is one a running sidecar exports —
// scraped from its /metrics right after start — and documented in sidecar/CONFIG.md.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startMongo, uniqueDbName } from "../harness/mongo.mjs";
import { writeConfig, startSidecar } from "../e2e/sidecar.mjs";
import { root, run, readYaml } from "./support.mjs";

const ALERTS = join(root, "deploy/prometheus/alerts.yml");
const DASHBOARD = join(root, "deploy/grafana/mongo-seq.json");

// PromQL words that are not metric names (functions are recognised by the `(` after them).
const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"]);
const FUNCTIONS = new Set([
  "rate", "irate", "increase", "delta", "deriv", "sum", "min", "max", "avg", "count", "topk", "bottomk", "quantile",
  "label_values", "abs", "absent", "clamp_min", "clamp_max", "histogram_quantile", "time", "timestamp", "vector",
  "max_over_time", "min_over_time", "avg_over_time", "changes", "resets", "sort", "sort_desc",
]);

/** The metric names a PromQL expression reads (throws on an identifier it cannot place). */
export function metricNames(expr) {
  const stripped = expr
    .replace(/\blabel_values\(([^,()]+),\s*\w+\)/g, "label_values($1)") // Grafana: (metric, label)
    .replace(/"(?:[^"\\]|\\.)*"/g, " ") // strings (label values, templates)
    .replace(/\{[^}]*\}/g, " ") // label matchers
    .replace(/\[[^\]]*\]/g, " ") // ranges
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ") // label lists
    .replace(/\$\{?\w+\}?/g, " "); // Grafana variables
  const names = new Set();
  for (const match of stripped.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?/g)) {
    const [, word, call] = match;
    if (call) {
      assert.ok(FUNCTIONS.has(word), `unknown PromQL function ${word} in: ${expr}`);
    } else if (!KEYWORDS.has(word) && !/^\d/.test(word)) {
      names.add(word);
    }
  }
  return [...names];
}

let mongo;
let sidecar;
let exported; // Map name → type, from /metrics

before(async () => {
  mongo = await startMongo();
  const db = uniqueDbName("metrics");
  sidecar = await startSidecar(writeConfig(mongo.uri, db));
  const text = await (await fetch(`${sidecar.http}/metrics`)).text();
  exported = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name, type]));
});

after(async () => {
  sidecar?.child.kill("SIGTERM");
  await sidecar?.exited;
  await mongo?.stop();
});

test("a fresh sidecar exports each of its metrics at once, and CONFIG.md documents each", () => {
  const documented = readFileSync(join(root, "sidecar/CONFIG.md"), "utf8");
  assert.ok(exported.size >= 10, `too few metrics exported:\n${[...exported.keys()].join("\n")}`);
  for (const name of exported.keys()) {
    assert.ok(name.startsWith("mongo_seq_"), `${name}: every metric is named mongo_seq_*`);
    assert.ok(documented.includes(`\`${name}`), `${name} is exported but not documented in sidecar/CONFIG.md`);
  }
  // Series exist before anything happened, so increase() in the alerts sees the first event.
  for (const name of ["mongo_seq_errors_total", "mongo_seq_fenced_total", "mongo_seq_documents_skipped_total", "mongo_seq_lease_acquired_total"]) {
    assert.ok(exported.has(name), `${name} is exported from the start`);
  }
});

test("the Grafana dashboard queries only metrics the sidecar exports", () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8"));
  const queries = [
    ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => [panel.title, target.expr])),
    ...dashboard.templating.list.filter((v) => v.type === "query").map((v) => [`variable ${v.name}`, v.query.query ?? v.query]),
  ];
  assert.ok(queries.length >= 10, "the dashboard has its queries");
  const used = new Set();
  for (const [where, expr] of queries) {
    const names = metricNames(expr);
    assert.ok(names.length > 0, `${where}: ${expr} names no metric`);
    for (const name of names) {
      assert.ok(exported.has(name), `${where}: ${name} is not exported by the sidecar (${expr})`);
      used.add(name);
    }
  }
  const unused = [...exported.keys()].filter((name) => !used.has(name));
  assert.deepEqual(unused, [], "every exported metric has a place on the dashboard");
  for (const panel of dashboard.panels) {
    assert.deepEqual(panel.datasource, { type: "prometheus", uid: "${datasource}" }, `${panel.title}: the data source variable`);
  }
});

test("the alerting rules pass promtool and query only exported metrics", () => {
  const check = run("promtool", ["check", "rules", ALERTS]);
  assert.equal(check.status, 0, check.stdout + check.stderr);
  console.log(check.stdout.trim());
  const unit = run("promtool", ["test", "rules", join(root, "deploy/prometheus/alerts.test.yml")]);
  assert.equal(unit.status, 0, unit.stdout + unit.stderr);

  const [file] = readYaml(ALERTS);
  const rules = file.groups.flatMap((group) => group.rules);
  assert.ok(rules.length >= 8);
  for (const rule of rules) {
    for (const name of metricNames(rule.expr)) {
      // `up` is Prometheus' own, per scraped target.
      assert.ok(name === "up" || exported.has(name), `${rule.alert}: ${name} is not exported by the sidecar`);
    }
    assert.ok(rule.labels?.severity, `${rule.alert} has a severity`);
    assert.ok(rule.annotations?.summary && rule.annotations?.description, `${rule.alert} says what and why`);
  }
  // The early warning for lost history.
  assert.ok(rules.some((rule) => /mongo_seq_resume_token_age_seconds/.test(rule.expr)), "a rule on the resume token's age");
});

test("metricNames reads PromQL as the checks above need", () => {
  assert.deepEqual(metricNames('sum by (trigger) (rate(mongo_seq_events_total{trigger=~"$trigger"}[$__rate_interval]))'), ["mongo_seq_events_total"]);
  assert.deepEqual(metricNames("max by (trigger) (a * b) > 60 and on (trigger) sum by (trigger) (rate(c[5m])) > 0"), ["a", "b", "c"]);
  assert.deepEqual(metricNames('up{job=~".*mongo-seq.*"} == 0'), ["up"]);
  assert.deepEqual(metricNames("label_values(mongo_seq_trigger_healthy, trigger)"), ["mongo_seq_trigger_healthy"]);
  assert.throws(() => metricNames("made_up_function(x)"), /unknown PromQL function/);
});
