// Matching an actual value against a unified-test-format expectation ("Evaluating Matches" of
// the drivers' unified test format specification):
// - numbers compare by value whatever their BSON type (int32, int64, double);
// - a root-level document (a result, an event's command or reply, each document of a root-level
//   array) may hold fields the expectation does not name; an embedded document may not;
// - arrays match element by element and have the same length;
// - `$$` operators: $$exists, $$type, $$unsetOrMatches, $$matchesEntity, $$matchesHexBytes,
//   $$sessionLsid, $$lte, $$matchAsDocument, $$matchAsRoot.
// A mismatch throws a MatchError naming the path where it was found.
import { EJSON } from "bson";

export class MatchError extends Error {}

const fail = (path, message) => {
  throw new MatchError(`${path || "(root)"}: ${message}`);
};

/** The numeric value of a JS number, bigint or BSON number wrapper; undefined otherwise. */
export function numeric(value) {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  switch (value?._bsontype) {
    case "Int32":
    case "Double":
      return Number(value.value);
    case "Long":
      return value.toNumber();
    default:
      return undefined;
  }
}

const isDocument = (v) =>
  v !== null && typeof v === "object" && !Array.isArray(v) && v._bsontype === undefined && !(v instanceof Date) && !Buffer.isBuffer(v) && !(v instanceof Uint8Array);

const show = (v) => {
  try {
    return EJSON.stringify(v, { relaxed: true });
  } catch {
    return String(v);
  }
};

/** BSON type aliases of `$$type` and a test of a value against one. */
function hasType(value, alias) {
  const n = typeof value === "number";
  switch (alias) {
    case "double":
      return value?._bsontype === "Double" || n;
    case "string":
      return typeof value === "string";
    case "object":
      return isDocument(value);
    case "array":
      return Array.isArray(value);
    case "binData":
      return value?._bsontype === "Binary" || Buffer.isBuffer(value);
    case "objectId":
      return value?._bsontype === "ObjectId";
    case "bool":
      return typeof value === "boolean";
    case "date":
      return value instanceof Date;
    case "null":
      return value === null;
    case "regex":
      return value instanceof RegExp || value?._bsontype === "BSONRegExp";
    case "int":
      // A promoted int32 is a JS number: any integer in range.
      return value?._bsontype === "Int32" || (n && Number.isInteger(value) && Math.abs(value) <= 2 ** 31);
    case "long":
      // A promoted int64 is a JS number too: int32 and int64 cannot be told apart then.
      return value?._bsontype === "Long" || typeof value === "bigint" || (n && Number.isInteger(value));
    case "timestamp":
      return value?._bsontype === "Timestamp";
    case "decimal":
      return value?._bsontype === "Decimal128";
    case "number":
      return numeric(value) !== undefined || value?._bsontype === "Decimal128";
    case "minKey":
      return value?._bsontype === "MinKey";
    case "maxKey":
      return value?._bsontype === "MaxKey";
    default:
      throw new MatchError(`$$type: unknown alias ${alias}`);
  }
}

/** Plain equality of two leaf values (not documents or arrays). */
function sameLeaf(expected, actual) {
  const e = numeric(expected);
  if (e !== undefined) return numeric(actual) === e;
  if (expected === null) return actual === null;
  if (typeof expected !== "object") return expected === actual;
  if (expected instanceof Date) return actual instanceof Date && actual.getTime() === expected.getTime();
  if (expected._bsontype === "ObjectId") return actual?._bsontype === "ObjectId" && expected.equals(actual);
  if (expected._bsontype === "Binary") {
    const bytes = actual?._bsontype === "Binary" ? actual.buffer : actual;
    return bytes instanceof Uint8Array && Buffer.compare(Buffer.from(expected.buffer), Buffer.from(bytes)) === 0;
  }
  if (expected._bsontype === "Timestamp") return actual?._bsontype === "Timestamp" && expected.equals(actual);
  return show(expected) === show(actual);
}

const special = (expected) => isDocument(expected) && Object.keys(expected).length === 1 && Object.keys(expected)[0].startsWith("$$");

/**
 * Matches `actual` against `expected`; throws MatchError. `entities` resolves $$matchesEntity and
 * $$sessionLsid.
 */
export function match(expected, actual, { entities = new Map(), root = true, path = "" } = {}) {
  const ctx = { entities };
  matchValue(expected, actual, root, path, ctx);
}

function matchValue(expected, actual, root, path, ctx) {
  if (actual instanceof Map) actual = Object.fromEntries(actual); // the driver's index keys
  if (special(expected)) return matchOperator(expected, actual, root, path, ctx, true);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) fail(path, `expected an array, got ${show(actual)}`);
    if (actual.length !== expected.length) fail(path, `expected ${expected.length} elements, got ${actual.length}: ${show(actual)}`);
    expected.forEach((e, i) => matchValue(e, actual[i], root && isDocument(e), `${path}[${i}]`, ctx));
    return;
  }
  if (isDocument(expected)) {
    if (!isDocument(actual)) fail(path, `expected a document, got ${show(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      const here = path ? `${path}.${key}` : key;
      const present = Object.prototype.hasOwnProperty.call(actual, key) && actual[key] !== undefined;
      if (special(value)) {
        const op = Object.keys(value)[0];
        if (op === "$$exists") {
          if (value.$$exists !== present) fail(here, value.$$exists ? "expected the field to exist" : `expected no such field, got ${show(actual[key])}`);
          continue;
        }
        if (op === "$$unsetOrMatches" && !present) continue;
        if (!present) fail(here, `missing field (expected ${show(value)})`);
        matchOperator(value, actual[key], false, here, ctx, false);
        continue;
      }
      if (!present) fail(here, `missing field (expected ${show(value)})`);
      matchValue(value, actual[key], false, here, ctx);
    }
    if (!root) {
      const extra = Object.keys(actual).filter((k) => actual[k] !== undefined && !(k in expected));
      if (extra.length) fail(path, `unexpected fields ${extra.join(", ")} in ${show(actual)}`);
    }
    return;
  }
  if (!sameLeaf(expected, actual)) fail(path, `expected ${show(expected)}, got ${show(actual)}`);
}

function matchOperator(expected, actual, root, path, ctx, atTop) {
  const [op, spec] = Object.entries(expected)[0];
  switch (op) {
    case "$$exists":
      if (atTop) fail(path, "$$exists outside a document");
      return;
    case "$$type": {
      const aliases = Array.isArray(spec) ? spec : [spec];
      if (!aliases.some((a) => hasType(actual, a))) fail(path, `expected type ${aliases.join("|")}, got ${show(actual)}`);
      return;
    }
    case "$$unsetOrMatches":
      if (actual === undefined || (atTop && actual === null)) return;
      return matchValue(spec, actual, root, path, ctx);
    case "$$matchesEntity": {
      if (!ctx.entities.has(spec)) fail(path, `no entity ${spec}`);
      return matchValue(ctx.entities.get(spec), actual, root, path, ctx);
    }
    case "$$matchesHexBytes": {
      const bytes = actual?._bsontype === "Binary" ? actual.buffer : actual;
      if (!(bytes instanceof Uint8Array) || Buffer.from(bytes).toString("hex") !== String(spec).toLowerCase()) fail(path, `expected bytes ${spec}`);
      return;
    }
    case "$$sessionLsid": {
      const session = ctx.entities.get(spec);
      if (!session?.id) fail(path, `no session entity ${spec}`);
      return matchValue(session.id, actual, false, path, ctx);
    }
    case "$$lte": {
      const a = numeric(actual);
      if (a === undefined || a > numeric(spec)) fail(path, `expected ≤ ${show(spec)}, got ${show(actual)}`);
      return;
    }
    case "$$matchAsDocument": {
      if (typeof actual !== "string") fail(path, `expected a JSON string, got ${show(actual)}`);
      return matchValue(spec, EJSON.parse(actual, { relaxed: false }), false, path, ctx);
    }
    case "$$matchAsRoot":
      return matchValue(spec, actual, true, path, ctx);
    default:
      fail(path, `unknown operator ${op}`);
  }
}
