// Conversions between the driver's BSON values and the core's canonical Extended JSON v2
// (int64 crosses exactly as {$numberLong}; nothing passes through a double): the caller's
// documents and Longs, the plans' commands, the documents read back; and the checks that a
// document can be stored.
//
// A BSON library only encodes values of its own major version, and an application may hold
// two drivers (mongoose ships its own `mongodb`), so every conversion goes through the codec of
// the BSON library of the driver that made the `Db`: the peer `mongodb` package's by default,
// another one given as the `bson` option of `Sequences`.
import { BSON as PEER_BSON } from "mongodb";
import { checkDocument, describe, invalidArgument, invalidOption } from "./errors.js";

/** MongoDB's limit on one document. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** Room for what an insert adds: the number and the formatted id (field names ≤ 200 bytes). */
const ADDED_FIELDS_BYTES = 1024;
const CANONICAL = { relaxed: false };
/** Parsed reservations kept per BSON library (`BsonCodec#reservations`). */
const KEPT_RESERVATIONS = 64;
/** Extended JSON wrappers other than `$numberLong` (and DBRef's `$ref`): such text goes through EJSON. */
const OTHER_WRAPPERS =
  /"\$(?:oid|binary|uuid|symbol|numberInt|numberDecimal|numberDouble|minKey|maxKey|regex|regularExpression|timestamp|date|code|dbPointer|ref|undefined)"/;
/** What a codec uses of a BSON library. */
const NEEDED = { EJSON: ["parse", "serialize", "stringify"], Long: ["fromString", "fromNumber"], Int32: [], Double: [], calculateObjectSize: null };

/** The conversions of one BSON library. */
class BsonCodec {
  #EJSON;
  #Long;
  #Int32;
  #Double;
  #calculateObjectSize;

  constructor(BSON) {
    this.#EJSON = BSON.EJSON;
    this.#Long = BSON.Long;
    this.#Int32 = BSON.Int32;
    this.#Double = BSON.Double;
    this.#calculateObjectSize = BSON.calculateObjectSize;
  }

  /** A driver document as canonical EJSON for the core. */
  fromDriver(document) {
    return this.#EJSON.serialize(document, CANONICAL);
  }

  /** A value the core gave as Extended JSON (an `_id` in a plan's result) as the driver reads it (int32 and safe int64 as numbers). */
  toDriver(value) {
    return this.#EJSON.deserialize({ value }, { relaxed: true }).value;
  }

  /**
   * A driver document as canonical Extended JSON text (a reply for the core). A counter —
   * strings, Longs, Int32s, booleans, null, documents and arrays of them — is written directly
   * (EJSON.stringify was a tenth of the package's CPU per reservation); any other value (a
   * double, a date, an ObjectId, …) sends the whole document through EJSON.
   */
  documentJson(document) {
    return plainJson(document) ?? this.#EJSON.stringify(document, CANONICAL);
  }

  /** A caller's document (`argument` names it) as canonical EJSON; INVALID_ARGUMENT if it cannot be one. */
  documentArgument(argument, document) {
    checkDocument(argument, document);
    try {
      return this.fromDriver(document);
    } catch (error) {
      throw invalidArgument(argument, `cannot be stored as BSON: ${error.message}`);
    }
  }

  /**
   * Checks that a caller's document, once numbered, can be stored: a document that BSON can
   * encode (no cycle) within MongoDB's 16 MiB. Done before any number is reserved for it.
   */
  checkStorable(argument, document) {
    checkDocument(argument, document);
    let bytes;
    try {
      bytes = this.#calculateObjectSize(document);
    } catch (error) {
      throw invalidArgument(argument, `cannot be stored as BSON: ${error.message}`);
    }
    if (bytes + ADDED_FIELDS_BYTES > MAX_DOCUMENT_BYTES) {
      throw invalidArgument(argument, `is ${bytes} bytes of BSON: with its number it would exceed MongoDB's 16 MiB document limit`);
    }
  }

  /**
   * Reservations by their text: a counter's next reservation is most often the same command
   * again (block 1: every `next()`), so it is parsed once. Only `findOneAndUpdate`s, whose
   * filter, update and options the driver reads without changing (an insert's document would
   * get its `_id` set); a few counters' worth, then forgotten.
   */
  #reservations = new Map();

  /**
   * A command's canonical Extended JSON text as driver values: what `EJSON.parse(text, { relaxed:
   * false })` gives. Most commands hold no wrapper but `$numberLong`: for them, plain JSON.parse
   * and a walk (a reviver makes JSON.parse several times slower); any other wrapper, EJSON itself.
   * Envelope numbers (minMs, first, count) come out as Int32 objects: read them with Number().
   */
  parseCommand(text) {
    const kept = this.#reservations.get(text);
    if (kept !== undefined) return kept;
    const command = OTHER_WRAPPERS.test(text) ? this.#EJSON.parse(text, CANONICAL) : this.#revive(JSON.parse(text));
    if (command.op === "findOneAndUpdate") {
      if (this.#reservations.size >= KEPT_RESERVATIONS) this.#reservations.clear();
      this.#reservations.set(text, command);
    }
    return command;
  }

  /** EJSON's canonical reading of plain numbers and `{ $numberLong }`, in place. */
  #revive(value) {
    if (typeof value === "number") {
      if (!Number.isInteger(value) || Object.is(value, -0)) return new this.#Double(value);
      return value >= -2147483648 && value <= 2147483647 ? new this.#Int32(value) : this.#Long.fromNumber(value);
    }
    if (value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.#revive(value[i]);
      return value;
    }
    if (typeof value.$numberLong === "string") return this.#Long.fromString(value.$numberLong);
    for (const key in value) value[key] = this.#revive(value[key]);
    return value;
  }
}

/**
 * Canonical Extended JSON text of `value` when it holds only strings, Longs, Int32s, booleans,
 * null, plain documents and arrays (what EJSON.stringify writes for them, keys in the same
 * order); undefined for anything else.
 */
function plainJson(value) {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (Array.isArray(value)) {
        const items = [];
        for (const item of value) {
          const text = plainJson(item);
          if (text === undefined) return undefined;
          items.push(text);
        }
        return `[${items.join(",")}]`;
      }
      switch (value._bsontype) {
        case "Long":
          return `{"$numberLong":"${value.toString()}"}`;
        case "Int32":
          return `{"$numberInt":"${value.value}"}`;
        case undefined:
          break;
        default:
          return undefined;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return undefined;
      const fields = [];
      for (const key of Object.keys(value)) {
        const text = plainJson(value[key]);
        if (text === undefined) return undefined;
        fields.push(`${JSON.stringify(key)}:${text}`);
      }
      return `{${fields.join(",")}}`;
    }
    default:
      return undefined;
  }
}

const codecs = new WeakMap();

/**
 * The codec of a BSON library (`mongodb`'s `BSON` export, or `mongoose.mongo.BSON`); the peer
 * `mongodb` package's without one. INVALID_OPTION (`bson`) when it is not a BSON library.
 */
export function bsonCodec(BSON = PEER_BSON) {
  if (typeof BSON !== "object" || BSON === null) {
    throw invalidOption("bson", `must be the BSON export of a mongodb driver (\`import { BSON } from "mongodb"\`, \`mongoose.mongo.BSON\`), got ${describe(BSON)}`);
  }
  let codec = codecs.get(BSON);
  if (codec === undefined) {
    for (const [name, methods] of Object.entries(NEEDED)) {
      const part = BSON[name];
      if (typeof part !== "function" && typeof part !== "object") throw invalidOption("bson", `has no \`${name}\`: not the BSON export of a mongodb driver`);
      for (const method of methods ?? []) {
        if (typeof part[method] !== "function") throw invalidOption("bson", `has no \`${name}.${method}\`: not the BSON export of a mongodb driver`);
      }
    }
    codec = new BsonCodec(BSON);
    codecs.set(BSON, codec);
  }
  return codec;
}

/** An integer argument for the core: Long (of any BSON library) → bigint; numbers, bigints and EJSON pass as they are. */
export function toCoreInteger(value) {
  return PEER_BSON.Long.isLong(value) ? value.toBigInt() : value;
}
