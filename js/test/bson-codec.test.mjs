// The codec's reply text (bson.js `documentJson`): a counter's values are written directly,
// anything else goes through EJSON — either way the text is EJSON.stringify's, canonical.
import { test } from "node:test";
import assert from "node:assert/strict";
import { BSON } from "mongodb";
import { bsonCodec } from "../src/bson.js";

const { Long, Int32, Double, ObjectId, Decimal128, Binary } = BSON;

test("documentJson writes what EJSON.stringify writes (canonical), for counters and anything else", () => {
  const codec = bsonCodec(BSON);
  const documents = [
    { _id: "bench", seq: Long.fromNumber(5), definition: { start: Long.fromNumber(1), step: Long.fromNumber(1) }, definitionDigest: "b1992bd103fd143e" },
    { _id: 'a"b\u00e9\n\u2028', seq: new Int32(-7), list: [true, false, null, "s", [Long.fromString("-9223372036854775808")]], $k: {}, "": [], 10: "integer-like key first" },
    Object.assign(Object.create(null), { _id: "no prototype", seq: Long.fromNumber(2) }),
    // Through EJSON: a double (the legacy shell's 0.0 must stay a double), numbers, dates, ids, …
    { _id: "double", seq: new Double(0) },
    { _id: "number", seq: 5 },
    { _id: new ObjectId("65b000000000000000000001"), seq: Long.fromNumber(1) },
    { _id: "date", at: new Date(0) },
    { _id: "decimal", seq: Decimal128.fromString("1.5") },
    { _id: "binary", data: new Binary(Buffer.from("ab")) },
    { _id: "nested", definition: { start: new Double(1.5) } },
  ];
  for (const document of documents) {
    assert.equal(codec.documentJson(document), BSON.EJSON.stringify(document, { relaxed: false }), JSON.stringify(Object.keys(document)));
  }
});
