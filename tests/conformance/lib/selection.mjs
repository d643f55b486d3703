// Which tests apply: the spec files' own runOnRequirements, evaluated against what the server
// says of itself, then what mongo-seq uses. Every skip has a reason; reasons are worded so that
// equal reasons group in the summary.

/** What the server says of itself (hello, buildInfo) and which test commands it has. */
export async function describeServer(client) {
  const admin = client.db("admin");
  const hello = await admin.command({ hello: 1 }).catch(() => admin.command({ isMaster: 1 }));
  const build = await admin.command({ buildInfo: 1 });
  const version = (build.versionArray ?? String(build.version).split(".").map(Number)).slice(0, 3).map(Number);
  const topology = hello.msg === "isdbgrid" ? "sharded" : hello.setName ? "replicaset" : "single";
  let failPoints = true;
  try {
    await admin.command({ configureFailPoint: "failCommand", mode: "off" });
  } catch {
    failPoints = false;
  }
  return {
    version,
    versionText: version.join("."),
    topology,
    sessions: hello.logicalSessionTimeoutMinutes != null,
    failPoints,
    admin,
  };
}

function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
const parseVersion = (text) => String(text).split(".").map(Number);

/** Why one runOnRequirement is not met (null when it is). */
async function unmet(requirement, server) {
  const { minServerVersion, maxServerVersion, topologies, serverless, serverParameters, auth, authMechanism, csfle } = requirement;
  if (minServerVersion && compareVersions(server.version, parseVersion(minServerVersion)) < 0) {
    return `needs MongoDB ≥ ${minServerVersion} (the server declares ${server.versionText})`;
  }
  if (maxServerVersion && compareVersions(server.version, parseVersion(maxServerVersion)) > 0) {
    return `written for MongoDB ≤ ${maxServerVersion} (the server declares ${server.versionText})`;
  }
  if (topologies) {
    const ours = server.topology === "sharded" ? ["sharded", "sharded-replicaset"] : [server.topology];
    if (!topologies.some((t) => ours.includes(t))) {
      return `needs a ${topologies.join(" or ")} topology (the server is ${server.topology === "single" ? "a standalone" : server.topology})`;
    }
  }
  if (serverless === "require") return "needs a serverless deployment";
  if (auth === true || authMechanism) return "needs authentication";
  if (csfle) return "needs client-side field-level encryption";
  if (serverParameters) {
    for (const [name, value] of Object.entries(serverParameters)) {
      let reply;
      try {
        reply = await server.admin.command({ getParameter: 1, [name]: 1 });
      } catch {
        return `needs server parameter ${name} (getParameter is not answered)`;
      }
      if (JSON.stringify(reply[name]) !== JSON.stringify(value)) return `needs server parameter ${name} = ${JSON.stringify(value)}`;
    }
  }
  return null;
}

/** Why a list of alternatives (runOnRequirements) is not met; null when one is. */
export async function requirementsUnmet(requirements, server) {
  if (!requirements || requirements.length === 0) return null;
  const reasons = [];
  for (const requirement of requirements) {
    const reason = await unmet(requirement, server);
    if (reason === null) return null;
    reasons.push(reason);
  }
  return reasons[0];
}

// What mongo-seq never sends (its commands: crates/mongo-seq-core/src/protocol/command.rs, the
// sidecar's change stream: sidecar/src/connection/stream.rs). Tests of these are not run.
const UNUSED_OPERATIONS = new Map([
  ["clientBulkWrite", "the client-level bulkWrite command (MongoDB 8.0)"],
  ["mapReduce", "mapReduce"],
  ["distinct", "distinct"],
  ["count", "the count command"],
  ["countDocuments", "countDocuments"],
  ["estimatedDocumentCount", "estimatedDocumentCount"],
  ["findOneAndReplace", "findOneAndReplace"],
  ["findOneAndDelete", "findOneAndDelete"],
  ["modifyCollection", "collMod validators"],
  ["listIndexes", "listIndexes"],
  ["listIndexNames", "listIndexes"],
  ["createSearchIndex", "search indexes"],
]);
const UNUSED_ARGUMENTS = new Map([
  ["hint", "index hints"],
  ["collation", "collations"],
  ["let", "`let` variables"],
  ["arrayFilters", "arrayFilters"],
  ["comment", "command comments"],
  ["bypassDocumentValidation", "bypassDocumentValidation"],
  ["allowDiskUse", "allowDiskUse"],
  ["showExpandedEvents", "expanded change events (showExpandedEvents)"],
  ["min", "find min/max"],
  ["max", "find min/max"],
  ["returnKey", "returnKey"],
  ["showRecordId", "showRecordId"],
  ["viewOn", "views"],
  ["timeoutMS", "client-side operation timeouts (timeoutMS)"],
]);
// By file: the whole file is about something mongo-seq does not do.
const UNUSED_FILES = [
  [/dots_and_dollars/, "field names with dots or dollars"],
  [/unacknowledged/i, "unacknowledged writes (w: 0; mongo-seq writes with w: majority)"],
  [/aggregate-(out|merge)|aggregate-write-readPreference/, "aggregations that write ($out, $merge)"],
  [/redacted-commands/, "authentication commands"],
  [/-validation\.json$/, "update documents the driver must refuse (client-side validation of the user's update)"],
];

/** Why a test uses something mongo-seq does not (null when it does not). */
export function unusedFeature(file, createEntities, test) {
  const kinds = new Map((createEntities ?? []).map((entity) => {
    const [kind, spec] = Object.entries(entity)[0];
    return [spec.id, kind];
  }));
  for (const [pattern, what] of UNUSED_FILES) {
    if (pattern.test(file)) return `uses ${what}, which mongo-seq never sends`;
  }
  let reason = null;
  for (const operation of test.operations ?? []) {
    if (reason) break;
    const used = UNUSED_OPERATIONS.get(operation.name);
    if (used) {
      reason = `uses ${used}, which mongo-seq never sends`;
      break;
    }
    const args = operation.arguments ?? {};
    // A bulk write's models carry the options of their own (hint, collation, sort, …).
    const models = (args.requests ?? []).map((request) => Object.values(request)[0] ?? {});
    for (const key of [...Object.keys(args), ...models.flatMap(Object.keys)]) {
      const what = UNUSED_ARGUMENTS.get(key);
      if (what) {
        reason = `uses ${what}, which mongo-seq never sends`;
        break;
      }
    }
    if (operation.name === "aggregate" && (args.pipeline ?? []).some((stage) => "$out" in stage || "$merge" in stage)) {
      reason = "uses aggregations that write ($out, $merge), which mongo-seq never sends";
    }
    if ([args, ...models].some((a) => Array.isArray(a.update))) {
      reason = "uses pipeline updates, which mongo-seq never sends";
    }
    if (operation.name === "createChangeStream" && kinds.get(operation.object) !== "collection" && !reason) {
      reason = "uses change streams on a whole database or deployment, which mongo-seq never opens (it watches one collection)";
    }
    if (operation.name === "aggregate" && kinds.get(operation.object) === "database" && !reason) {
      reason = "uses database-level aggregations, which mongo-seq never sends";
    }
    if (((operation.name === "updateOne" || operation.name === "replaceOne") && "sort" in args) || models.some((m) => "sort" in m)) {
      reason = "uses updateOne/replaceOne with sort (MongoDB 8.0), which mongo-seq never sends";
    }
  }
  return reason;
}

/** Why the server cannot run the test: test commands or sessions it lacks (null when it can). */
export function missingCapability(file, createEntities, test, server) {
  const operations = test.operations ?? [];
  const usesFailPoint = operations.some((o) => o.name === "failPoint" || o.name === "targetedFailPoint");
  if (usesFailPoint && !server.failPoints) return "needs fail points (configureFailPoint, a test command the server does not have)";
  const usesSession = (createEntities ?? []).some((e) => e.session) || operations.some((o) => o.object?.startsWith?.("session") || o.arguments?.session);
  if (usesSession && !server.sessions) return "needs sessions (the server reports no logicalSessionTimeoutMinutes)";
  return null;
}
