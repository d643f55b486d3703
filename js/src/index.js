// mongo-seq: sequential numbers for MongoDB documents over the official driver.
export { Sequences } from "./sequences.js";
export { Sequence } from "./sequence.js";
export { importCounters } from "./import-counters.js";
export { isMongoSeqError, JS_ERROR_CODES } from "./errors.js";
// The package's answer to the core's `localDates` command (Intl), for tools and tests.
export { localDates } from "./local-dates.js";
// The Wasm core itself (options, plans, allocator), for tools and tests.
export { core } from "./wasm.js";
