// Conversions between the driver's BSON values and the core's Extended JSON v2. Canonical mode
// both ways, so int64 crosses exactly (Long ↔ {$numberLong}); nothing passes through a double.
import { BSON } from "mongodb";

const { EJSON, Long } = BSON;

/** A core command's EJSON (filter, update, document) as driver values (int64 → Long). */
export function toDriver(ejson) {
  return EJSON.deserialize(ejson, { relaxed: false });
}

/** A driver document as canonical EJSON for the core. */
export function fromDriver(document) {
  return EJSON.serialize(document, { relaxed: false });
}

/** A number the core handed out (number or bigint) as the int64 the driver stores. */
export function toInt64(value) {
  return Long.fromBigInt(BigInt(value));
}

/** An integer argument for the core: Long → bigint; numbers, bigints and EJSON pass as they are. */
export function toCoreInteger(value) {
  return Long.isLong(value) ? value.toBigInt() : value;
}
