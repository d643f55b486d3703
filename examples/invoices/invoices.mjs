// The demo's invoicing: one program drafts invoices, another issues them later; the sidecar
// numbers each invoice when it is issued (its `on = "match"` trigger), in the yearly series of
// its issue date in Paris, gaplessly. Drafts are never numbered.
//   node examples/invoices/invoices.mjs <uri> draft     inserts six drafts (no number)
//   node examples/invoices/invoices.mjs <uri> issue     issues five of them, a batch across New Year's Eve
//   node examples/invoices/invoices.mjs <uri> amend     deletes two issued invoices: one before the
//                                                       collection keeps pre-images (its number is a
//                                                       gap until someone voids it), one after (the
//                                                       sidecar records its number in the ledger)
import process from "node:process";
import { MongoClient } from "mongodb";
import { Sequences } from "mongo-seq";

const [uri, step] = process.argv.slice(2);
const say = (line) => console.log(`  [${step}] ${line}`);

// Issue dates (UTC instants): 22:59:59 UTC on 31 December is 23:59:59 in Paris (still 2026);
// 23:00:00 UTC is midnight in Paris, 1 January 2027.
const ISSUES = [
  ["A-100", "2026-11-26T10:00:00Z"],
  ["A-101", "2026-12-15T09:30:00Z"],
  ["A-102", "2026-12-31T22:59:59Z"],
  ["A-103", "2026-12-31T23:00:00Z"],
  ["A-104", "2027-01-02T08:00:00Z"],
];

const client = new MongoClient(uri);
try {
  const invoices = client.db("mongo_seq_demo").collection("invoices");
  if (step === "draft") {
    const refs = [...ISSUES.map(([ref]) => ref), "A-105"];
    await invoices.insertMany(refs.map((ref, i) => ({ ref, customer: `customer ${i + 1}`, total: 100 + i, status: "draft" })));
    say(`${refs.length} drafts inserted (${refs.join(", ")}): no number yet`);
  } else if (step === "issue") {
    const seqs = new Sequences(client.db("mongo_seq_demo"));
    for (const [ref, at] of ISSUES) {
      await invoices.updateOne({ ref }, { $set: { status: "issued", issuedAt: new Date(at) } });
    }
    say(`${ISSUES.length} invoices issued; A-105 stays a draft`);
    for (const [ref, at] of ISSUES) {
      const { _id } = await invoices.findOne({ ref });
      await seqs.waitForNumber(invoices, _id, { field: "seq", timeoutMs: 20_000 });
      const { invoiceNo } = await invoices.findOne({ _id });
      say(`${ref} issued ${at} (Paris: ${paris(at)}) → ${invoiceNo}`);
    }
    const draft = await invoices.findOne({ ref: "A-105" });
    say(`A-105 (draft): ${draft.invoiceNo ?? "no number"}`);
  } else if (step === "amend") {
    const db = client.db("mongo_seq_demo");
    // A deletion's change event carries only the document's _id; the sidecar learns its number
    // from the pre-image, which MongoDB keeps only for collections that enable it. So this
    // deletion leaves a gap nobody explained...
    await invoices.deleteOne({ ref: "A-104" });
    say("A-104 (INV-2027-000002) deleted before the collection kept pre-images: a gap in 2027");
    // ...and from now on every deleted number is recorded, by the gapless trigger, in the ledger.
    await db.command({ collMod: "invoices", changeStreamPreAndPostImages: { enabled: true } });
    await invoices.deleteOne({ ref: "A-101" });
    const ledger = db.collection("mongo_seq_ledger");
    const recorded = await waitFor(() => ledger.findOne({ "_id.counter": "invoices/2026", "_id.number": 2 }));
    say(`A-101 (INV-2026-000002) deleted: the sidecar recorded ${recorded._id.counter} #${recorded._id.number} in the ledger ("${recorded.reason}")`);
  } else {
    throw new Error(`usage: invoices.mjs <uri> draft|issue|amend (got ${JSON.stringify(step)})`);
  }
} finally {
  await client.close();
}

/** Polls `find` until it gives a document (at most 20 s). */
async function waitFor(find) {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const found = await find();
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the sidecar did not record the deletion within 20 s");
}

function paris(at) {
  return new Date(at).toLocaleString("sv-SE", { timeZone: "Europe/Paris" });
}
