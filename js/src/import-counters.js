// Adopting the counters of other mongoose plugins (mongoose-sequence, mongoose-auto-increment,
// @typegoose/auto-increment): the core's import plan decides everything (which documents are
// counters, the sequence and counter id of each, what to write: never backwards); this runs it
// against the plugin's collection and the counters collection of `db`.
import { core } from "./wasm.js";
import { bsonCodec } from "./bson.js";
import { describe, invalidArgument, invalidOption, isDocument } from "./errors.js";
import { runPlan } from "./run-plan.js";

/**
 * Reads the plugin's counters and mongo-seq's, and with `apply: true` moves mongo-seq's past
 * them. Resolves with the report of every counter (a dry run by default).
 * @param {import("mongodb").Db} db
 * @param {{ from: "mongoose-sequence" | "auto-increment", apply?: boolean, source?: string,
 *   counters?: string, names?: Record<string, string>, counterField?: string, bson?: object }} options
 */
export async function importCounters(db, options) {
  if (typeof db?.collection !== "function") throw invalidArgument("db", `must be a mongodb Db, got ${describe(db)}`);
  // Said here: the core would see JSON, where `undefined` is `null`.
  if (!isDocument(options)) throw invalidOption("options", `must be an object { from, apply, … }, got ${describe(options)}`);
  const { bson, ...given } = options;
  const codec = bsonCodec(bson);
  // Invalid options throw here, before any I/O; the collection names with the database's name.
  const request = core.importRequest(given);
  const database = typeof db.databaseName === "string" ? db.databaseName : undefined;
  core.checkCollectionName("source", request.source, database);
  core.checkCollectionName("counters", request.counters, database);
  const runner = { counters: db.collection(request.counters), documents: db.collection(request.source), codec };
  return runPlan(core.importCounters(request), runner);
}
