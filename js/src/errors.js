// Errors the JS layer raises itself, shaped like the core's (an Error named MongoSeqError with a
// stable `code` and optional `details`), so callers handle both the same way.

/** Codes only the JS layer produces (the core's are listed by `core.errorCodes()`). */
export const JS_ERROR_CODES = Object.freeze(["WAIT_TIMEOUT", "SEQUENCE_CONFLICT"]);

/** An Error with `name` "MongoSeqError", `code` and, when given, `details`. */
export function mongoSeqError(code, message, details) {
  const error = new Error(message);
  error.name = "MongoSeqError";
  error.code = code;
  if (details !== undefined) error.details = details;
  return error;
}

/** True for every error this package raises on purpose (core or JS layer). */
export function isMongoSeqError(error) {
  return error instanceof Error && error.name === "MongoSeqError" && typeof error.code === "string";
}

/** The one argument check the JS layer makes itself: option objects have only known keys. */
export function checkKnownKeys(what, options, known) {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw mongoSeqError("INVALID_OPTION", `${what} must be an object`, { option: what });
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw mongoSeqError("UNKNOWN_OPTION", `unknown option \`${key}\` of ${what} (known options: ${known.join(", ")})`, { key });
    }
  }
  return options;
}
