// Values of README code blocks as JSON, so the block's process can report them and the test can
// compare them with the comments: BigInt, undefined and BSON values made explicit.
export function encode(value) {
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (value === undefined) return { $undefined: true };
  if (Array.isArray(value)) return value.map(encode);
  if (value !== null && typeof value === "object") {
    if (value._bsontype) return { $bson: value._bsontype, value: String(value) };
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, encode(item)]));
  }
  return value;
}
