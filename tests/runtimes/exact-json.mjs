// JSON without precision loss, for the vector file: integers beyond ±(2^53 - 1) parse as
// BigInt (JSON.parse would round them), and a canonical stringifier (sorted keys, BigInt as
// digits, undefined as null) turns expected and actual values into comparable text.

/** Parses JSON text; integer literals outside the safe range become BigInt. */
export function parseExact(text) {
  let at = 0;
  const fail = (what) => {
    throw new SyntaxError(`exact JSON: ${what} at offset ${at}`);
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const value = () => {
    space();
    const ch = text[at];
    if (ch === "{") return object();
    if (ch === "[") return array();
    if (ch === '"') return string();
    if (ch === "-" || (ch >= "0" && ch <= "9")) return number();
    for (const [word, result] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return result;
      }
    }
    return fail(`unexpected ${JSON.stringify(ch)}`);
  };
  const object = () => {
    const result = {};
    at++;
    space();
    if (text[at] === "}") return at++, result;
    for (;;) {
      space();
      const key = string();
      space();
      if (text[at++] !== ":") fail("expected ':'");
      result[key] = value();
      space();
      const next = text[at++];
      if (next === "}") return result;
      if (next !== ",") fail("expected ',' or '}'");
    }
  };
  const array = () => {
    const result = [];
    at++;
    space();
    if (text[at] === "]") return at++, result;
    for (;;) {
      result.push(value());
      space();
      const next = text[at++];
      if (next === "]") return result;
      if (next !== ",") fail("expected ',' or ']'");
    }
  };
  const string = () => {
    const match = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(at));
    if (!match) fail("bad string");
    at += match[0].length;
    return JSON.parse(match[0]);
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at));
    if (!match) fail("bad number");
    at += match[0].length;
    const isInteger = match[1] === undefined && match[2] === undefined;
    if (isInteger) {
      const big = BigInt(match[0]);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    return Number(match[0]);
  };
  const result = value();
  space();
  if (at !== text.length) fail("trailing text");
  return result;
}

/** Canonical JSON text: sorted keys, BigInt as digits, undefined as null, 2-space indent. */
export function canonical(value, indent = "") {
  if (value === undefined || value === null) return "null";
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`not JSON: ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((item) => inner + canonical(item, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((key) => `${inner}${JSON.stringify(key)}: ${canonical(value[key], inner)}`).join(",\n")}\n${indent}}`;
}

/** A line diff of two canonical texts (only differing lines, with line numbers), for failures. */
export function lineDiff(expected, actual) {
  const want = expected.split("\n");
  const got = actual.split("\n");
  const lines = [];
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    if (want[i] === got[i]) continue;
    if (want[i] !== undefined) lines.push(`  ${i + 1} - ${want[i]}`);
    if (got[i] !== undefined) lines.push(`  ${i + 1} + ${got[i]}`);
  }
  return lines.join("\n");
}
