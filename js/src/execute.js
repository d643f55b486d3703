// Runs one core command with the official driver and returns the reply the core expects, both
// as JSON text: the command is canonical Extended JSON, which the driver's EJSON parser turns
// into BSON values (int64 → Long) in one pass (bson.js); a document read back goes out through EJSON
// canonical text (Int32, Long and Double stay what they are, so the core sees `5.0` as a
// double — a legacy counter it must convert — and not as the integer 5).
// The read and write concerns are the core's (the command's `readConcern`/`writeConcern`: majority
// writes, majority reads of counters, local reads of documents), sent as they are so nothing is
// inherited from the caller's `Db`; so is where a read goes: the primary, whatever read preference
// the `Db` has (the core's `Command::primary_only`: only a read causally after a change event,
// which the package never sends, may be served elsewhere).
// The only decisions here are about I/O: which collection object, the random draw and sleep of a
// `wait` (the core says how long at most; it reads no clock and draws no random numbers), and
// asking the caller's sequence for the numbers of a `take`. A duplicate-key error (code 11000)
// is handed to the core with what the server said about the index (its message and key
// pattern): the plan either handles it (a reply) or it is the caller's own, rethrown as the
// driver raised it. A write on the counters refused for its shard key (a counters collection
// sharded on another key than `_id`) is the core's UNSUPPORTED_SHARD_KEY naming the collection
// and what to do. Every other error propagates.
import { core } from "./wasm.js";
import { sleep } from "./runtime.js";
import { localDates } from "./local-dates.js";

const DUPLICATE_KEY = 11000;
const INDEX_NOT_FOUND = 27;
const NAMESPACE_NOT_FOUND = 26;
const NONE = '{"kind":"none"}';
const INSERTED = '{"kind":"inserted"}';
const WAITED = '{"kind":"waited"}';

/** True when `error` is a duplicate-key error (single write or the first of a bulk write). */
function isDuplicateKey(error) {
  // Number(): with promoteValues off, the driver hands the error's code over as an Int32 too.
  return Number(error?.code) === DUPLICATE_KEY || Number(error?.writeErrors?.[0]?.code) === DUPLICATE_KEY;
}

/**
 * What the server said about a duplicate-key error — its message and the key pattern of the
 * unique index (sent by MongoDB 4.2 and later) — when the plan handles it; the core decides
 * (`Plan.handlesDuplicateKey`). Any other error, a duplicate key the core calls the caller's
 * own among them, is rethrown as the driver raised it.
 */
function duplicateKeyFacts(error, plan) {
  if (!isDuplicateKey(error)) throw error;
  const source = error?.writeErrors?.[0]?.err ?? error?.writeErrors?.[0] ?? error;
  const errmsg = String(source?.errmsg ?? error?.errmsg ?? error?.message ?? "");
  const pattern = source?.keyPattern ?? error?.keyPattern;
  // Only the keys matter (the values may be Int32s with promoteValues off).
  const keyPattern = pattern && typeof pattern === "object" ? Object.fromEntries(Object.keys(pattern).map((key) => [key, 1])) : undefined;
  if (!plan.handlesDuplicateKey(errmsg, keyPattern)) throw error;
  return { errmsg, keyPattern };
}

/** The `duplicateKey` reply to a duplicate-key error the plan handles. */
function duplicateKeyReply(error, plan) {
  return JSON.stringify({ kind: "duplicateKey", ...duplicateKeyFacts(error, plan) });
}

/**
 * @param {string} text  the command, canonical Extended JSON text from the plan
 * @param {{ counters: import("mongodb").Collection, documents?: import("mongodb").Collection,
 *           document?: object, batch?: object[], insertedId?: unknown, insertedIds?: object,
 *           sequence?: import("./sequence.js").Sequence, codec: object }} runner  the collections; the
 *           caller's document (`insertDocument`: inserted as a copy with the core's fields set,
 *           its `_id` recorded in `insertedId`) or documents (`insertDocuments`: `_id`s in
 *           `insertedIds` by index); the sequence whose counters answer a `take`; the BSON
 *           codec of the collections' driver (bson.js)
 * @param {{ handlesDuplicateKey(errmsg: string, keyPattern?: object): boolean }} plan  the core's
 *           plan waiting for the reply (it tells whether a duplicate key is its to handle)
 * @returns {Promise<string>} the reply, JSON text
 */
export async function executeCommand(text, runner, plan) {
  const command = runner.codec.parseCommand(text);
  try {
    return await run(command, runner, plan);
  } catch (error) {
    throw (command.collection === "counters" && shardKeyError(runner.counters, error)) || error;
  }
}

/**
 * The core's error for a write the server refused for the counters collection's shard key
 * (`UNSUPPORTED_SHARD_KEY`); undefined for any other error.
 */
function shardKeyError(counters, error) {
  const code = Number(error?.code ?? error?.writeErrors?.[0]?.code);
  if (!Number.isSafeInteger(code)) return undefined;
  const namespace = String(counters?.namespace ?? counters?.collectionName ?? "counters");
  return core.shardKeyRefusal(namespace, code, String(error?.errmsg ?? error?.message ?? ""));
}

/** The driver collection a command names: the counters, the ledger, or the caller's documents. */
function collectionOf(command, runner) {
  switch (command.collection) {
    case "counters":
      return runner.counters;
    case "ledger":
      if (runner.ledger === undefined) throw new Error("mongo-seq: a ledger command without a ledger collection (a bug)");
      return runner.ledger;
    default:
      return runner.documents;
  }
}

async function run(command, runner, plan) {
  const collection = collectionOf(command, runner);
  const write = concerns(command);
  const read = { promoteValues: false, ...write };
  switch (command.op) {
    case "findOneAndUpdate": {
      const options = { ...read, upsert: command.options.upsert, returnDocument: command.options.returnDocument };
      return found(() => collection.findOneAndUpdate(command.filter, command.update, options), runner.codec, plan);
    }
    case "findOne": {
      const options = command.options ? { ...read, sort: command.options.sort, projection: command.options.projection } : read;
      return found(() => collection.findOne(command.filter, options), runner.codec, plan);
    }
    case "find": {
      const { projection, sort, limit } = command.options ?? {};
      const documents = await collection.find(command.filter, { ...read, projection, sort, limit: limit === undefined ? undefined : Number(limit) }).toArray();
      return `{"kind":"documents","documents":[${documents.map((document) => runner.codec.documentJson(document)).join(",")}]}`;
    }
    case "insertOne":
      return inserted(() => collection.insertOne(command.document, write), plan);
    case "insertDocument": {
      const document = { ...runner.document, ...command.fields };
      const reply = await inserted(() => collection.insertOne(document, write), plan);
      if (reply === INSERTED) runner.insertedId = document._id;
      return reply;
    }
    case "insertDocuments":
      return insertedMany(collection, command, runner, write, plan);
    case "update":
      return updated(collection, command, write);
    case "updateMany": {
      const result = await collection.updateMany(command.filter, command.update, write);
      return `{"kind":"writeResult","n":${result.matchedCount},"nModified":${result.modifiedCount}}`;
    }
    case "createIndex": {
      const options = { name: command.name, unique: command.unique, ...write };
      if (command.partialFilterExpression !== undefined) options.partialFilterExpression = command.partialFilterExpression;
      try {
        // Key directions come as Int32 objects (canonical EJSON): the driver wants numbers.
        const keys = Object.fromEntries(Object.entries(command.keys).map(([key, direction]) => [key, Number(direction)]));
        await collection.createIndex(keys, options);
        return NONE;
      } catch (error) {
        return duplicateKeyReply(error, plan);
      }
    }
    case "dropIndex":
      try {
        await collection.dropIndex(command.name, write);
      } catch (error) {
        // Already gone (IndexNotFound; NamespaceNotFound: no collection at all).
        if (Number(error?.code) !== INDEX_NOT_FOUND && Number(error?.code) !== NAMESPACE_NOT_FOUND) throw error;
      }
      return NONE;
    case "take": {
      const values = await runner.sequence.takeNumbers(command.counterId, Number(command.count));
      // join(): exact digits for numbers and BigInts alike.
      return `{"kind":"numbers","values":[${values.join(",")}]}`;
    }
    case "wait": {
      const [minMs, maxMs] = [Number(command.minMs), Number(command.maxMs)];
      await sleep(minMs + Math.random() * (maxMs - minMs));
      return WAITED;
    }
    case "localDates":
      // No server involved: the runtime's time-zone data (local-dates.js).
      return JSON.stringify({ kind: "localDates", dates: localDates(String(command.timeZone), command.instants.map(integer)) });
    default:
      throw new Error(`mongo-seq: unknown command ${JSON.stringify(command.op)} from the core (package build mismatch?)`);
  }
}

/** An envelope integer of a command (revived as Int32 or Long) as a number. */
function integer(value) {
  return typeof value?.toNumber === "function" ? value.toNumber() : Number(value);
}

/**
 * `update`: one single-document statement per entry, as a bulk write of `updateOne`s (the
 * server's `update` command). The reply carries the write errors as the server sent them: the
 * plan reads them (a duplicate key is a number to take again), so they are not thrown.
 */
async function updated(collection, command, write) {
  const operations = command.updates.map(({ filter, update }) => ({ updateOne: { filter, update } }));
  let result;
  let writeErrors = [];
  let writeConcernError;
  try {
    result = await collection.bulkWrite(operations, { ...write, ordered: command.ordered === true });
  } catch (error) {
    if (error?.name !== "MongoBulkWriteError" || error.result === undefined) throw error;
    result = error.result;
    writeErrors = [error.writeErrors ?? []].flat().map((e) => ({ index: Number(e.index), code: Number(e.code), errmsg: String(e.errmsg ?? e.message ?? "") }));
  }
  const concernError = result.getWriteConcernError?.();
  if (concernError) writeConcernError = { code: Number(concernError.code), errmsg: String(concernError.errmsg ?? concernError.message ?? "") };
  return JSON.stringify({ kind: "writeResult", n: result.matchedCount, nModified: result.modifiedCount, writeErrors, ...(writeConcernError && { writeConcernError }) });
}

/** The driver options of the concerns the core chose for `command` (none when it chose none). */
function concerns(command) {
  const options = {};
  if (command.writeConcern) options.writeConcern = { w: plain(command.writeConcern.w) };
  if (command.readConcern) {
    options.readConcern = { level: String(command.readConcern.level) };
    options.readPreference = "primary";
  }
  return options;
}

/** `"majority"` stays a string; a member count (revived as Int32) becomes a number. */
function plain(w) {
  return typeof w === "string" ? w : Number(w);
}

async function found(run, codec, plan) {
  try {
    const document = await run();
    return document ? `{"kind":"document","document":${codec.documentJson(document)}}` : NONE;
  } catch (error) {
    return duplicateKeyReply(error, plan);
  }
}

async function inserted(run, plan) {
  try {
    await run();
    return INSERTED;
  } catch (error) {
    return duplicateKeyReply(error, plan);
  }
}

/** `insertDocuments`: the caller's documents from `first`, with the core's fields, in order. */
async function insertedMany(collection, command, runner, write, plan) {
  const first = Number(command.first);
  const documents = command.fields.map((fields, i) => ({ ...runner.batch[first + i], ...fields }));
  try {
    const result = await collection.insertMany(documents, { ...write, ordered: true });
    documents.forEach((_, i) => (runner.insertedIds[first + i] = result.insertedIds[i]));
    return `{"kind":"writeResult","n":${documents.length},"nModified":0}`;
  } catch (error) {
    const { errmsg } = duplicateKeyFacts(error, plan);
    // Ordered: the documents before the refused one are in (the driver set their `_id`).
    const index = Number(error.writeErrors?.[0]?.index ?? 0);
    for (let i = 0; i < index; i++) runner.insertedIds[first + i] = documents[i]._id;
    const writeError = { index, code: DUPLICATE_KEY, errmsg };
    return JSON.stringify({ kind: "writeResult", n: index, nModified: 0, writeErrors: [writeError] });
  }
}
