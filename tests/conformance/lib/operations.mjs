// The unified format's operations, run with the Node driver. Each returns the value the spec's
// `expectResult` is matched against (driver result classes turned into plain objects).

const TIMEOUT_MS = 10_000;

async function within(promise, what) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`runner: ${what} did not finish within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A bulk write's result as the spec names its fields. */
export function bulkResult(result) {
  return {
    deletedCount: result.deletedCount,
    insertedCount: result.insertedCount,
    insertedIds: result.insertedIds,
    matchedCount: result.matchedCount,
    modifiedCount: result.modifiedCount,
    upsertedCount: result.upsertedCount,
    upsertedIds: result.upsertedIds,
  };
}

import { numeric } from "./match.mjs";

const plain = (result) => (result && typeof result === "object" ? { ...result } : result);

/** A sort or projection with JS numbers (the driver reads them as such). */
const numbers = (spec) => Object.fromEntries(Object.entries(spec).map(([k, v]) => [k, numeric(v) ?? v]));

/** Driver options from an operation's arguments (minus the ones passed positionally). */
function options(args, positional, context) {
  const out = {};
  for (const [key, value] of Object.entries(args)) {
    if (positional.includes(key)) continue;
    if (key === "session") out.session = context.entity(value);
    else if (key === "returnDocument") out.returnDocument = String(value).toLowerCase();
    // Options are read as JS numbers by the driver (`typeof x === "number"`); the spec file's
    // int32/int64 wrappers would be ignored. Documents keep their types.
    else if (["sort", "projection"].includes(key) && value && typeof value === "object") out[key] = numbers(value);
    else out[key] = numeric(value) ?? value;
  }
  return out;
}

const COLLECTION = {
  insertOne: (c, a, x) => c.insertOne(a.document, options(a, ["document"], x)).then(plain),
  insertMany: (c, a, x) => c.insertMany(a.documents, options(a, ["documents"], x)).then(plain),
  updateOne: (c, a, x) => c.updateOne(a.filter, a.update, options(a, ["filter", "update"], x)).then(plain),
  updateMany: (c, a, x) => c.updateMany(a.filter, a.update, options(a, ["filter", "update"], x)).then(plain),
  replaceOne: (c, a, x) => c.replaceOne(a.filter, a.replacement, options(a, ["filter", "replacement"], x)).then(plain),
  deleteOne: (c, a, x) => c.deleteOne(a.filter, options(a, ["filter"], x)).then(plain),
  deleteMany: (c, a, x) => c.deleteMany(a.filter, options(a, ["filter"], x)).then(plain),
  findOneAndUpdate: (c, a, x) => c.findOneAndUpdate(a.filter, a.update, options(a, ["filter", "update"], x)),
  findOneAndReplace: (c, a, x) => c.findOneAndReplace(a.filter, a.replacement, options(a, ["filter", "replacement"], x)),
  findOneAndDelete: (c, a, x) => c.findOneAndDelete(a.filter, options(a, ["filter"], x)),
  find: (c, a, x) => c.find(a.filter ?? {}, options(a, ["filter"], x)).toArray(),
  findOne: (c, a, x) => c.findOne(a.filter ?? {}, options(a, ["filter"], x)),
  aggregate: (c, a, x) => c.aggregate(a.pipeline, options(a, ["pipeline"], x)).toArray(),
  bulkWrite: (c, a, x) => c.bulkWrite(a.requests, options(a, ["requests"], x)).then(bulkResult),
  countDocuments: (c, a, x) => c.countDocuments(a.filter ?? {}, options(a, ["filter"], x)),
  estimatedDocumentCount: (c, a, x) => c.estimatedDocumentCount(options(a, [], x)),
  distinct: (c, a, x) => c.distinct(a.fieldName, a.filter ?? {}, options(a, ["fieldName", "filter"], x)),
  createIndex: (c, a, x) => c.createIndex(numbers(a.keys), options(a, ["keys"], x)),
  dropIndex: (c, a, x) => c.dropIndex(a.name, options(a, ["name"], x)).then(() => undefined),
  rename: (c, a, x) => c.rename(a.to, options(a, ["to"], x)).then(() => undefined),
  createChangeStream: (c, a, x) => openStream(c, a, x),
};

const DATABASE = {
  runCommand: (d, a, x) => d.command(a.command, options(a, ["command", "commandName"], x)),
  createCollection: (d, a, x) => d.createCollection(a.collection, options(a, ["collection"], x)).then(() => undefined),
  dropCollection: (d, a, x) => d.dropCollection(a.collection, options(a, ["collection"], x)).then(() => undefined),
  aggregate: (d, a, x) => d.aggregate(a.pipeline, options(a, ["pipeline"], x)).toArray(),
  createChangeStream: (d, a, x) => openStream(d, a, x),
  listCollections: (d, a, x) => d.listCollections(a.filter ?? {}, options(a, ["filter"], x)).toArray(),
};

const CLIENT = {
  createChangeStream: (c, a, x) => openStream(c, a, x),
  listDatabases: (c, a) => c.db("admin").admin().listDatabases(a).then((r) => r.databases),
};

const STREAM = {
  // The driver's next() sends getMores until an event or an error comes.
  iterateUntilDocumentOrError: (s) => within(s.next(), "iterateUntilDocumentOrError"),
  iterateOnce: (s) => within(s.tryNext(), "iterateOnce"),
  close: (s) => s.close().then(() => undefined),
};

/** A change stream, its aggregate sent at once (as the spec's createChangeStream does). */
async function openStream(target, args, context) {
  const stream = target.watch(args.pipeline ?? [], options(args, ["pipeline"], context));
  context.streams.push(stream);
  // The driver sends the aggregate lazily; the unified runner's hook sends it now, so errors
  // surface here, as the spec expects.
  await within(stream.cursor.cursorInit(), "createChangeStream");
  return stream;
}

/** Runs `operation` on its object; `context` gives entities, streams and test-runner hooks. */
export async function run(operation, context) {
  const args = operation.arguments ?? {};
  if (operation.object === "testRunner") return context.testRunner(operation.name, args);
  const target = context.entity(operation.object);
  const kind = context.kindOf(operation.object);
  const table = { collection: COLLECTION, database: DATABASE, client: CLIENT, changeStream: STREAM }[kind];
  const run = table?.[operation.name];
  if (!run) throw new UnsupportedOperation(`${kind}.${operation.name}`);
  return within(Promise.resolve(run(target, args, context)), `${kind}.${operation.name}`);
}

export class UnsupportedOperation extends Error {}
