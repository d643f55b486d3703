// The sans-I/O loop: ask the core's plan for a command, run it, feed the reply, until done.
import { executeCommand } from "./execute.js";

/**
 * Runs a core plan to completion and frees it. Resolves with the plan's result; rejects with
 * the core's MongoSeqError, or with a driver error other than a duplicate key.
 */
export async function runPlan(plan, target) {
  try {
    let step = plan.start();
    while ("command" in step) {
      const reply = await executeCommand(step.command, target);
      step = plan.feed(reply);
    }
    return step.done;
  } finally {
    plan.free();
  }
}
