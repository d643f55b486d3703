// The sans-I/O loop: ask the core's plan for a command, run it, feed the reply, until done.
// Commands and replies cross the Wasm boundary as JSON text (see execute.js).
import { executeCommand } from "./execute.js";
import { invalidOption } from "./errors.js";

/**
 * Runs a core plan to completion and frees it, its commands on `runner`: where they run (the
 * collections, the BSON codec, the sequence whose counters answer a `take`; execute.js). Resolves with the plan's result (with
 * `output: false`, undefined: the result is not converted to JS); rejects with the core's
 * MongoSeqError, or with a driver error the plan does not handle.
 */
export async function runPlan(plan, runner, { output = true } = {}) {
  try {
    let command = plan.commandJson();
    while (command !== undefined) command = plan.feedJson(await executeCommand(command, runner, plan));
    return output ? plan.start().done : undefined;
  } catch (error) {
    // The driver refused values of another BSON major before sending anything: the Db comes
    // from another copy of the driver (mongoose's own, typically).
    if (error?.name === "BSONVersionError") {
      throw invalidOption("bson", `the Db belongs to another copy of the mongodb driver than the one mongo-seq uses (${error.message}): pass that driver's BSON export, e.g. new Sequences(connection.db, { bson: mongoose.mongo.BSON })`);
    }
    throw error;
  } finally {
    plan.free();
  }
}
