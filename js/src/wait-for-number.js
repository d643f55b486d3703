// Reading back a number assigned by another process (the sidecar numbers inserted documents).
// Polls the document by `_id` (works on every deployment; change streams need a replica set)
// with a growing interval, until the field holds an integer or the deadline passes.
import { core } from "./wasm.js";
import { describe, invalidOption, mongoSeqError } from "./errors.js";

const FIRST_POLL_MS = 10;
/** Longest wait a timer can express (larger delays fire at once). */
const MAX_MS = 2 ** 31 - 1;

function milliseconds(option, value, least) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < least || value > MAX_MS) {
    throw invalidOption(option, `must be a number of milliseconds from ${least} to ${MAX_MS}, got ${describe(value)}`);
  }
  return value;
}

export async function waitForNumber(collection, id, { field = "seq", timeoutMs = 5000, pollMs = 200 } = {}, codec) {
  // The sidecar writes a field path (`seq`, `meta.seq`): the core's rules for it.
  core.checkFieldPath("field", field);
  milliseconds("timeoutMs", timeoutMs, 0);
  milliseconds("pollMs", pollMs, 1);
  const deadline = Date.now() + timeoutMs;
  let delay = Math.min(FIRST_POLL_MS, pollMs);
  for (;;) {
    const document = await collection.findOne({ _id: id }, { projection: { [field]: 1 } });
    const value = field.split(".").reduce((parent, key) => parent?.[key], document);
    if (value !== undefined && value !== null) {
      // The core reads the integer (any BSON integer type; beyond 2^53 a bigint) or says why not.
      return core.readInteger(codec.fromDriver({ value }).value, field);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw mongoSeqError(
        "WAIT_TIMEOUT",
        `no number in \`${field}\` of document ${JSON.stringify(codec.fromDriver({ id }).id)} after ${timeoutMs} ms`,
        { field, timeoutMs, found: document !== null },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, pollMs);
  }
}
