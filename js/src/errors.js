// Errors the JS layer raises itself, shaped like the core's (an Error named MongoSeqError with a
// stable `code` and optional `details`), so callers handle both the same way; and the checks of
// the arguments only JS can make (is it a Collection, a document, a boolean), done before any
// command is sent.

/** Codes the JS layer produces (the core's are listed by `core.errorCodes()`; SEQUENCE_CONFLICT is
 * both: the JS one for `sequence(name)` asked again with other options). */
export const JS_ERROR_CODES = Object.freeze(["WAIT_TIMEOUT", "SEQUENCE_CONFLICT", "WASM_LOAD_FAILED"]);

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

/** INVALID_ARGUMENT naming `argument`, worded like the core's. */
export function invalidArgument(argument, reason) {
  return mongoSeqError("INVALID_ARGUMENT", `invalid argument \`${argument}\`: ${reason}`, { argument });
}

/** INVALID_OPTION naming `option`, worded like the core's. */
export function invalidOption(option, reason) {
  return mongoSeqError("INVALID_OPTION", `invalid option \`${option}\`: ${reason}`, { option });
}

/** A short description of a value for messages ("number 5", "null", "an array", "a Date"). */
export function describe(value) {
  if (value === null) return "null";
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "string":
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case "number":
      return Number.isFinite(value) ? `number ${value}` : String(value);
    case "bigint":
      return `${value}n`;
    case "boolean":
      return `boolean ${value}`;
    case "symbol":
      return "a symbol";
    case "function":
      return "a function";
    default: {
      if (Array.isArray(value)) return "an array";
      const name = value._bsontype ?? value.constructor?.name;
      if (typeof name !== "string" || name === "" || name === "Object") return "an object";
      return /^[AEIOU]/.test(name) ? `an ${name}` : `a ${name}`;
    }
  }
}

/** True for a plain data object: what the driver stores as a document (not an array, a Date, a Map, a BSON value…). */
export function isDocument(value) {
  return typeof value === "object" && value !== null && Object.prototype.toString.call(value) === "[object Object]" && value._bsontype === undefined;
}

/** Checks that `value` is a document; INVALID_ARGUMENT naming `argument` otherwise. */
export function checkDocument(argument, value) {
  if (!isDocument(value)) throw invalidArgument(argument, `must be a document (a plain object), got ${describe(value)}`);
  return value;
}

/** Checks that `value` is a driver Collection (has the methods the package calls). */
export function checkCollection(value, methods) {
  if (!methods.every((method) => typeof value?.[method] === "function")) {
    throw invalidArgument("collection", `must be a mongodb Collection, got ${describe(value)}`);
  }
  return value;
}

/** An optional boolean option. */
export function checkBoolean(option, value) {
  if (value !== undefined && typeof value !== "boolean") throw invalidOption(option, `must be a boolean, got ${describe(value)}`);
  return value === true;
}

/** The one argument check the JS layer makes on option objects: only known keys. */
export function checkKnownKeys(what, options, known) {
  if (options === undefined || options === null) return {};
  if (!isDocument(options)) throw invalidOption(what, `must be an object, got ${describe(options)}`);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw mongoSeqError("UNKNOWN_OPTION", `unknown option \`${key}\` of ${what} (known options: ${known.join(", ")})`, { key });
    }
  }
  return options;
}
