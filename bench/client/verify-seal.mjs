// verifySeal over a sealed series of `links` documents (one yearly counter, two sealed fields),
// side by side with a plain find of the same documents and fields in the same run: what the
// verification (pages, the Wasm boundary, one SHA-256 per link, the walk) costs over reading
// the documents alone. Commands per verification counted by the driver's command monitoring.
import { MongoClient } from "mongodb";
import { Sequences, core } from "mongo-seq";
import { countCommands } from "../../tests/harness/mongo.mjs";
import { median } from "../lib/stats.mjs";

export async function runVerifySeal({ uri, dbName, report, links = 20_000, rounds = 3 }) {
  const client = new MongoClient(uri, { monitorCommands: true });
  await client.connect();
  const commands = countCommands(client);
  const db = client.db(dbName);
  try {
    const docs = db.collection("sealed_invoices");
    let previous = null;
    const batch = [];
    for (let no = 1; no <= links; no++) {
      const document = { _id: no, no, noPeriod: "2026", total: no * 10, customer: { name: `client ${no % 97}` } };
      const fields = { total: document.total, "customer.name": document.customer.name };
      const { hash } = core.sealLink({ series: "inv/2026", kind: "issue", number: no, period: "2026", fields }, previous);
      batch.push({ ...document, noSeal: { hash, previous } });
      previous = hash;
    }
    await docs.insertMany(batch);
    await db.collection("counters").insertOne({ _id: "inv/2026", seq: links, seal: { hash: previous } });
    const inv = new Sequences(db).sequence("inv", { reset: "yearly", timeZone: "UTC", sealFields: ["total", "customer.name"] });
    const projection = { _id: 1, no: 1, noPeriod: 1, noSeal: 1, total: 1, "customer.name": 1 };
    const verifyRates = [];
    const readRates = [];
    let perVerify = 0;
    for (let round = 0; round < rounds; round++) {
      let started = performance.now();
      const read = await docs.find({ noPeriod: "2026" }, { projection }).sort({ no: 1 }).toArray();
      readRates.push(read.length / ((performance.now() - started) / 1000));
      commands.reset();
      started = performance.now();
      const [series] = await inv.verifySeal({ collection: docs, field: "no" });
      verifyRates.push(links / ((performance.now() - started) / 1000));
      perVerify = Object.values(commands.snapshot()).reduce((a, b) => a + b, 0);
      if (!series?.verified || series.links !== links) throw new Error(`verifySeal did not verify ${links} links: ${JSON.stringify(series)}`);
    }
    report.add("client.verify_seal.links_per_s", median(verifyRates), "links/s", `verifySeal of a ${links}-link sealed series, median over rounds`);
    report.add("client.verify_seal.read_docs_per_s", median(readRates), "docs/s", "the same documents and fields read by one plain find, in the same run");
    report.add("client.verify_seal.read_over_verify", median(readRates) / median(verifyRates), "ratio", "how many times faster the plain read is than the verification", { server: false });
    report.add("client.verify_seal.commands", perVerify, "commands/call", "commands per verifySeal (getMore included): the counters, pages of 1,000 documents, the ledger", { server: false });
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}
