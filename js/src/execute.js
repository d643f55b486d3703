// Runs one core command with the official driver and returns the reply the core expects.
// The only decisions here are about I/O: which collection object, which driver error is a
// duplicate key (code 11000) that the plan handles itself, and the random draw and sleep of a
// `wait` (the core says how long at most; it reads no clock and draws no random numbers);
// every other error propagates.
import { setTimeout as sleep } from "node:timers/promises";
import { toDriver, fromDriver } from "./bson.js";

const DUPLICATE_KEY = 11000;

/** True when `error` is a duplicate-key error (single write or the first of a bulk write). */
export function isDuplicateKey(error) {
  // Number(): with promoteValues off, the driver hands the error's code over as an Int32 too.
  return Number(error?.code) === DUPLICATE_KEY || Number(error?.writeErrors?.[0]?.code) === DUPLICATE_KEY;
}

/**
 * The fields of the unique index a duplicate-key error is about, or undefined when the error
 * does not say: `keyPattern` when the server sends it, else the `dup key: { field: … }` part of
 * the message (servers and test servers that omit keyPattern still write it).
 */
export function duplicateKeyFields(error) {
  const source = error?.writeErrors?.[0]?.err ?? error;
  const pattern = source?.keyPattern ?? error?.keyPattern;
  if (pattern !== undefined && pattern !== null) return Object.keys(pattern);
  const message = String(source?.errmsg ?? error?.errmsg ?? error?.message ?? "");
  const match = /dup key: \{ ?"?([^":]+)"?\s*:/.exec(message);
  return match ? [match[1].trim()] : undefined;
}

/**
 * @param {import("../wasm/mongo_seq_wasm.js").Command} command
 * @param {{ counters: import("mongodb").Collection, documents?: import("mongodb").Collection,
 *           document?: object, insertedId?: unknown }} target  the collections, and the caller's
 *           own document for `insertDocument` (inserted as a copy with the core's fields set;
 *           its `_id` is recorded in `insertedId`)
 */
export async function executeCommand(command, target) {
  const collection = command.collection === "counters" ? target.counters : target.documents;
  // Replies keep their BSON types (Int32, Long, Double objects), so the core sees `5.0` as a
  // double — a legacy counter it must convert — and not as the integer 5.
  const read = { promoteValues: false };
  switch (command.op) {
    case "findOneAndUpdate": {
      const options = { ...read, upsert: command.options.upsert, returnDocument: command.options.returnDocument };
      return found(() => collection.findOneAndUpdate(toDriver(command.filter), toDriver(command.update), options));
    }
    case "findOne": {
      const options = command.options
        ? { ...read, sort: toDriver(command.options.sort), projection: toDriver(command.options.projection) }
        : read;
      return found(() => collection.findOne(toDriver(command.filter), options));
    }
    case "insertOne":
      return inserted(() => collection.insertOne(toDriver(command.document)));
    case "insertDocument": {
      const document = { ...target.document, ...toDriver(command.fields) };
      const reply = await inserted(() => collection.insertOne(document));
      if (reply.kind === "inserted") target.insertedId = document._id;
      return reply;
    }
    case "wait":
      await sleep(command.minMs + Math.random() * (command.maxMs - command.minMs));
      return { kind: "waited" };
    default:
      throw new Error(`mongo-seq: unknown command ${JSON.stringify(command.op)} from the core (package build mismatch?)`);
  }
}

async function found(run) {
  try {
    const document = await run();
    return document ? { kind: "document", document: fromDriver(document) } : { kind: "none" };
  } catch (error) {
    if (isDuplicateKey(error)) return { kind: "duplicateKey" };
    throw error;
  }
}

async function inserted(run) {
  try {
    await run();
    return { kind: "inserted" };
  } catch (error) {
    if (isDuplicateKey(error)) return { kind: "duplicateKey" };
    throw error;
  }
}
