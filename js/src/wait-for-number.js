// Reading back a number assigned by another process (the sidecar numbers inserted documents).
// Polls the document by `_id` (works on every deployment; change streams need a replica set)
// with a growing interval, until the field holds an integer or the deadline passes.
// Each poll reads the primary's majority-committed data (`readConcern: majority`, read
// preference `primary`, whatever the caller's `Db` says): a number a failover could still roll
// back — the sidecar's write applied by a primary that fails before replicating it, or by a
// deposed primary — is never handed back; one not yet committed only takes another poll. (The
// sidecar's write waits for the same majority before it counts as done.)
import { core } from "./wasm.js";
import { describe, invalidOption, mongoSeqError } from "./errors.js";

const FIRST_POLL_MS = 10;
/** See the top: majority-committed data, from the primary. */
const READ = Object.freeze({ readConcern: { level: "majority" }, readPreference: "primary" });
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
    const document = await collection.findOne({ _id: id }, { projection: { [field]: 1 }, ...READ });
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
