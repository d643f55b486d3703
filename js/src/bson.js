// The caller's values for the core: documents as canonical Extended JSON v2 (int64 crosses
// exactly as {$numberLong}; nothing passes through a double), Longs as BigInt, and the checks
// that a document can be stored. (Commands and replies: execute.js.)
import { BSON } from "mongodb";
import { checkDocument, invalidArgument } from "./errors.js";

const { EJSON, Long } = BSON;

/** MongoDB's limit on one document. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** Room for what an insert adds: the number and the formatted id (field names ≤ 200 bytes). */
const ADDED_FIELDS_BYTES = 1024;

/** A driver document as canonical EJSON for the core. */
export function fromDriver(document) {
  return EJSON.serialize(document, { relaxed: false });
}

/** A caller's document (`argument` names it) as canonical EJSON; INVALID_ARGUMENT if it cannot be one. */
export function documentArgument(argument, document) {
  checkDocument(argument, document);
  try {
    return fromDriver(document);
  } catch (error) {
    throw invalidArgument(argument, `cannot be stored as BSON: ${error.message}`);
  }
}

/**
 * Checks that a caller's document, once numbered, can be stored: a document that BSON can
 * encode (no cycle) within MongoDB's 16 MiB. Done before any number is reserved for it.
 */
export function checkStorable(argument, document) {
  checkDocument(argument, document);
  let bytes;
  try {
    bytes = BSON.calculateObjectSize(document);
  } catch (error) {
    throw invalidArgument(argument, `cannot be stored as BSON: ${error.message}`);
  }
  if (bytes + ADDED_FIELDS_BYTES > MAX_DOCUMENT_BYTES) {
    throw invalidArgument(argument, `is ${bytes} bytes of BSON: with its number it would exceed MongoDB's 16 MiB document limit`);
  }
}

/** An integer argument for the core: Long → bigint; numbers, bigints and EJSON pass as they are. */
export function toCoreInteger(value) {
  return Long.isLong(value) ? value.toBigInt() : value;
}
