// `Sequence#verifySeal`: a sealed series, written by hand as a mongo-seq sidecar stores it
// (docs/sealed-series.md), verified through the package (the core's plan over the driver):
// the intact series verifies, a tampering is named, hostile options are refused by name.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences, core } from "mongo-seq";
import { useMongo, assertRefused } from "./support.mjs";

const mongo = useMongo();
const SEALED = { reset: "yearly", timeZone: "UTC", sealFields: ["total", "customer.name"] };

/** The link of invoice `document` of `year`, as the sidecar seals it. */
function issue(year, document) {
  const fields = { total: document.total, "customer.name": document.customer.name };
  return { series: `inv/${year}`, kind: "issue", number: document.no, period: String(year), fields };
}

/** Appends `link` to the chain ending at `chain.last`: its seal. */
function append(chain, link) {
  const { hash, previous } = core.sealLink(link, chain.last ?? null);
  chain.last = hash;
  return { hash, previous };
}

const invoice = (year, no) => ({ _id: year * 100 + no, no, noPeriod: String(year), total: no * 10, customer: { name: `client ${no}`, vat: "ES1" } });

/**
 * 2025: invoices 1 and 2; 2026, chained to 2025's head: 1 to 4, invoice 3 deleted (its deletion
 * recorded with the link it held), 5 voided (no document held it), invoice 4's seal still
 * pending in the counter.
 */
async function writeSeries(db) {
  const docs = db.collection("invoices");
  const chain = {};
  for (const no of [1, 2]) {
    const document = invoice(2025, no);
    await docs.insertOne({ ...document, noSeal: append(chain, issue(2025, document)) });
  }
  await db.collection("counters").insertOne({ _id: "inv/2025", seq: 2, seal: { hash: chain.last } });
  const seals = [];
  const documents = [1, 2, 3, 4].map((no) => invoice(2026, no));
  for (const document of documents) seals.push(append(chain, issue(2026, document)));
  for (const index of [0, 1]) await docs.insertOne({ ...documents[index], noSeal: seals[index] });
  await docs.insertOne(documents[3]); // its seal is pending in the counter
  const removed = { fields: issue(2026, documents[2]).fields, seal: seals[2] };
  const deletion = append(chain, { ...issue(2026, documents[2]), kind: "deletion" });
  const voided = append(chain, { series: "inv/2026", kind: "void", number: 5, period: "2026", fields: {} });
  const entry = (number, kind, reason) => ({ _id: { counter: "inv/2026", number }, sequence: "inv", kind, reason, at: new Date(0), by: "test" });
  await db.collection("mongo_seq_ledger").insertMany([
    { ...entry(3, "deleted", "document deleted"), document: 202603, seal: deletion, removed },
    { ...entry(5, "void", "reserved and lost"), seal: voided },
  ]);
  // The counter's head is the void's; invoice 4's seal (before the deletion and the void) is pending.
  await db.collection("counters").insertOne({ _id: "inv/2026", seq: 5, seal: { hash: chain.last, pending: [{ id: 202604, number: 4, seal: seals[3] }] } });
  return docs;
}

test("verifySeal(): an intact sealed series verifies, period after period, a pending seal standing for its document's", async () => {
  const db = mongo.freshDb("verify_seal");
  const docs = await writeSeries(db);
  const inv = new Sequences(db).sequence("inv", SEALED);
  mongo.commands.reset();
  const reports = await inv.verifySeal({ collection: docs, field: "no" });
  assert.deepEqual(mongo.commands.snapshot(), { find: 5 }, "the counters, then per counter its documents and its ledger entries");
  assert.deepEqual(
    reports.map(({ series, links, verified, failures, pending }) => ({ series, links, verified, failures, pending })),
    [
      { series: "inv/2025", links: 2, verified: true, failures: [], pending: 0 },
      { series: "inv/2026", links: 6, verified: true, failures: [], pending: 0 },
    ],
  );
  assert.deepEqual(reports[1].last, { number: 5, kind: "void", hash: (await db.collection("counters").findOne({ _id: "inv/2026" })).seal.hash });

  // A sealed field changed by hand: its link is named, the rest verifies.
  await docs.updateOne({ _id: 202602 }, { $set: { total: 21 } });
  const [, changed] = await inv.verifySeal({ collection: docs, field: "no" });
  assert.equal(changed.verified, false);
  assert.deepEqual(changed.failures.map(({ number, kind, reason }) => ({ number, kind, reason })), [{ number: 2, kind: "issue", reason: "FIELD_CHANGED" }]);
  // A sealed document deleted without a record: the link after it misses its predecessor.
  await docs.updateOne({ _id: 202602 }, { $set: { total: 20 } });
  await docs.deleteOne({ _id: 202601 });
  const [, missing] = await inv.verifySeal({ collection: docs, field: "no" });
  assert.deepEqual(missing.failures.map(({ number, reason }) => ({ number, reason })), [{ number: 2, reason: "LINK_MISSING" }]);
});

test("verifySeal(): hostile options, and a sequence that seals nothing, are refused by name with nothing written", async () => {
  const cases = [
    ["no_options", undefined, "`collection`"],
    ["null_collection", (db) => ({ collection: null, field: "no" }), "`collection`"],
    ["no_field", (db) => ({ collection: db.collection("invoices") }), "`field`"],
    ["number_field", (db) => ({ collection: db.collection("invoices"), field: 42 }), "`field`"],
    ["nan_field", (db) => ({ collection: db.collection("invoices"), field: NaN }), "`field`"],
    ["bigint_field", (db) => ({ collection: db.collection("invoices"), field: 2n ** 63n }), "`field`"],
    ["object_field", (db) => ({ collection: db.collection("invoices"), field: { $gt: "" } }), "`field`"],
    ["not_a_collection", () => ({ collection: { find: 1 }, field: "no" }), "`collection`"],
    ["operator_field", (db) => ({ collection: db.collection("invoices"), field: "$where" }), "`field`"],
    ["huge_field", (db) => ({ collection: db.collection("invoices"), field: "x".repeat(100_000) }), "`field`"],
    ["unknown_option", (db) => ({ collection: db.collection("invoices"), field: "no", sealFields: ["total"] }), "sealFields", "UNKNOWN_OPTION"],
    ["not_options", () => "no", "verifySeal options", "INVALID_OPTION"],
  ];
  for (const [label, options, fragment, code = "INVALID_ARGUMENT"] of cases) {
    const error = await assertRefused(mongo, `verify_seal_${label}`, code, (seqs, db) => seqs.sequence("inv", SEALED).verifySeal(options?.(db)), writeSeries);
    assert.ok(error.message.includes(fragment), `${label}: ${error.message}`);
  }
  const error = await assertRefused(mongo, "verify_seal_unsealed", "INVALID_ARGUMENT", (seqs, db) => seqs.sequence("inv", { reset: "yearly", timeZone: "UTC" }).verifySeal({ collection: db.collection("invoices"), field: "no" }), writeSeries);
  assert.match(error.message, /`sealFields`/);
});
