// The sealed series' core calls as an outsider reaches them (`core.sealLink`, `core.verifySeries`)
// with hostile input: each is refused with a MongoSeqError naming the argument, never a Wasm
// trap or a serde internal; a JS number that cannot be an exact integer is never guessed at.
import { test } from "node:test";
import assert from "node:assert/strict";
import { core, isMongoSeqError } from "mongo-seq";
import { LEAKS } from "./support.mjs";

const link = (fields = { total: 100 }) => ({ series: "inv/2026", kind: "issue", number: 1, period: "2026", fields });

function refused(act, code, fragment) {
  try {
    act();
  } catch (error) {
    assert.ok(isMongoSeqError(error), `not a MongoSeqError: ${error?.stack ?? error}`);
    assert.equal(error.code, code, error.message);
    assert.ok(error.message.includes(fragment), `${error.message} lacks ${fragment}`);
    assert.doesNotMatch(error.message, LEAKS, "the message leaks internals");
    return;
  }
  assert.fail("not refused");
}

test("a seal is the same from a number, a bigint and Extended JSON, and 64 hex digits", () => {
  const { hash } = core.sealLink(link({ total: 100 }), null);
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.equal(core.sealLink(link({ total: 100n }), null).hash, hash);
  assert.equal(core.sealLink(link({ total: { $numberInt: "100" } }), undefined).hash, hash);
  assert.notEqual(core.sealLink(link({ total: 101 }), null).hash, hash);
  assert.notEqual(core.sealLink(link(), hash).hash, hash, "the previous hash is sealed too");
});

test("hostile links and arguments are refused by name", () => {
  for (const bad of [null, undefined, 42, "link", [], { ...link(), kind: "stamp" }, { ...link(), number: "1" }, { ...link(), fields: null }, { ...link(), extra: 1 }]) {
    refused(() => core.sealLink(bad, null), "INVALID_ARGUMENT", "`link`");
  }
  refused(() => core.sealLink(link({ total: NaN }), null), "INVALID_ARGUMENT", "`link`");
  refused(() => core.sealLink(link({ total: 9007199254740993 }), null), "INVALID_ARGUMENT", "`link`");
  refused(() => core.sealLink({ ...link(), number: 2n ** 63n }, null), "INVALID_ARGUMENT", "`link`");
  refused(() => core.sealLink(link({ total: { $numberLong: "x" } }), null), "INVALID_ARGUMENT", "`total`");
  refused(() => core.sealLink(link(), 5), "INVALID_ARGUMENT", "`previous`");
  refused(() => core.verifySeries("inv/2026", null, null, null), "INVALID_ARGUMENT", "`links`");
  refused(() => core.verifySeries("inv/2026", [{ ...link(), seal: { hash: 1 } }], null, null), "INVALID_ARGUMENT", "link 0");
  refused(() => core.verifySeries(7, [], null, null), "INVALID_ARGUMENT", "`series`");
});

test("a huge chain verifies, and a changed field in it is found", () => {
  let previous = null;
  const links = [];
  for (let number = 1; number <= 5000; number += 1) {
    const fields = { total: number, note: "é".repeat(50) };
    const { hash } = core.sealLink({ series: "s", kind: "issue", number, fields }, previous);
    links.push({ series: "s", kind: "issue", number, fields, seal: { hash, previous } });
    previous = hash;
  }
  const report = core.verifySeries("s", links, null, previous);
  assert.equal(report.verified, true);
  assert.equal(report.links, 5000);
  links[2500].fields.total = 0;
  const tampered = core.verifySeries("s", links, null, previous);
  assert.deepEqual(tampered.failures.map((f) => [f.number, f.reason]), [[2501, "FIELD_CHANGED"]]);
});
