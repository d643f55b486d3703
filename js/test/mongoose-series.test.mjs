// mongo-seq/mongoose for business document series, with both mongoose majors:
// periodic options (a yearly series in a time zone, numbered in the period of a date field), and
// `when`: a document is numbered on save() once it matches, exactly once, never renumbered.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import mongoose8 from "mongoose";
import mongoose9 from "mongoose9";
import { sequencePlugin } from "mongo-seq/mongoose";
import { startMongo, uniqueDbName } from "../../tests/harness/mongo.mjs";

let server;
before(async () => (server = await startMongo()));
after(async () => server?.stop());

const YEARLY = { reset: "yearly", timeZone: "Europe/Paris", format: "INV-{yyyy}-{seq:04}" };

for (const [label, mongoose] of [
  ["mongoose 8", mongoose8],
  ["mongoose 9", mongoose9],
]) {
  describe(`${label} (${mongoose.version})`, () => {
    const { Schema } = mongoose;
    let connection;
    let other; // a second process's connection to the same database
    before(async () => {
      const dbName = uniqueDbName(`mseries${mongoose.version}`);
      connection = await mongoose.createConnection(server.uri, { dbName }).asPromise();
      other = await mongoose.createConnection(server.uri, { dbName }).asPromise();
    });
    after(async () => {
      await connection?.dropDatabase().catch(() => {});
      await connection?.close();
      await other?.close();
    });
    let models = 0;
    const schemaOf = (fields, options) => {
      const schema = new Schema(fields);
      schema.plugin(sequencePlugin, options);
      return schema;
    };
    const model = (fields, options, on = connection) => {
      models += 1;
      return on.model(`S${models}`, schemaOf(fields, options), `s${models}`);
    };

    test("a yearly series: save() and insertMany() number each document in the year of its date field, the period beside the number", async () => {
      const Invoice = model({ issuedAt: Date }, { field: "number", formatField: "ref", dateField: "issuedAt", sequence: `inv${models}`, ...YEARLY });
      const december = await Invoice.create({ issuedAt: new Date("2025-12-31T22:59:59.999Z") });
      const january = await new Invoice({ issuedAt: new Date("2025-12-31T23:00:00Z") }).save();
      assert.deepEqual([december.number, december.ref, december.numberPeriod], [1, "INV-2025-0001", "2025"]);
      assert.deepEqual([january.number, january.ref, january.numberPeriod], [1, "INV-2026-0001", "2026"]);
      const batch = await Invoice.insertMany([{ issuedAt: new Date("2026-02-01") }, { issuedAt: new Date("2025-06-01") }, { issuedAt: new Date("2026-03-01") }]);
      assert.deepEqual(
        batch.map((doc) => doc.ref),
        ["INV-2026-0002", "INV-2025-0002", "INV-2026-0003"],
      );
      const stored = await Invoice.find({}, { _id: 0, number: 1, numberPeriod: 1 }).sort({ issuedAt: 1 }).lean();
      assert.deepEqual(stored, [
        { number: 2, numberPeriod: "2025" },
        { number: 1, numberPeriod: "2025" },
        { number: 1, numberPeriod: "2026" },
        { number: 2, numberPeriod: "2026" },
        { number: 3, numberPeriod: "2026" },
      ]);
      // Without a dateField: now.
      const Ticket = model({}, { field: "n", reset: "monthly", timeZone: "UTC" });
      const ticket = await Ticket.create({});
      assert.equal(ticket.n, 1);
      assert.match(ticket.nPeriod, /^\d{4}-\d\d$/);
    });

    test("when: drafts are not numbered; a document is numbered on the save() that makes it match, once", async () => {
      const options = { field: "number", formatField: "ref", dateField: "issuedAt", when: { status: "issued" }, sequence: `when${models}`, ...YEARLY };
      const fields = { status: String, issuedAt: Date, note: String };
      const Invoice = model(fields, options);
      const draft = await Invoice.create({ status: "draft", issuedAt: new Date("2026-05-01") });
      assert.equal(draft.number, undefined);
      draft.note = "edited";
      await draft.save();
      assert.equal((await Invoice.findById(draft._id).lean()).number, undefined, "an edited draft stays unnumbered");
      // Issued at creation: numbered in the insert.
      const issued = await Invoice.create({ status: "issued", issuedAt: new Date("2026-05-02") });
      assert.equal(issued.ref, "INV-2026-0001");
      // The draft issued later: numbered by the save that issues it.
      draft.status = "issued";
      await draft.save();
      assert.deepEqual([draft.number, draft.ref, draft.numberPeriod], [2, "INV-2026-0002", "2026"]);
      assert.deepEqual(await Invoice.findById(draft._id, { _id: 0, number: 1, ref: 1, numberPeriod: 1 }).lean(), { number: 2, ref: "INV-2026-0002", numberPeriod: "2026" });
      // Saved again, withdrawn, issued again: never renumbered.
      draft.note = "again";
      await draft.save();
      draft.status = "cancelled";
      await draft.save();
      draft.status = "issued";
      await draft.save();
      assert.equal((await Invoice.findById(draft._id).lean()).number, 2);
      // insertMany numbers only the documents that match.
      const batch = await Invoice.insertMany([
        { status: "draft", issuedAt: new Date("2026-06-01") },
        { status: "issued", issuedAt: new Date("2026-06-02") },
      ]);
      assert.deepEqual(
        batch.map((doc) => doc.number),
        [undefined, 3],
      );
      // assignNumbers(): every stored document that matches and has no number (updated outside save()).
      await Invoice.updateOne({ _id: batch[0]._id }, { $set: { status: "issued" } });
      const outcome = await Invoice.assignNumbers();
      assert.deepEqual(
        outcome.assigned.map(({ value, formatted }) => [value, formatted]),
        [[4, "INV-2026-0004"]],
      );
    });

    test("when as a function of the document", async () => {
      const Ticket = model({ priority: Number }, { field: "n", sequence: `fn${models}`, when: (doc) => doc.priority > 2 });
      const [low, high] = await Ticket.create([{ priority: 1 }, { priority: 5 }]);
      assert.deepEqual([low.n, high.n], [undefined, 1]);
      low.priority = 3;
      await low.save();
      assert.equal(low.n, 2);
      assert.equal((await Ticket.findById(low._id).lean()).n, 2);
    });

    test("when: two processes saving the same issued document give it one number", async () => {
      const options = { field: "number", when: { status: "issued" }, sequence: `race${models}` };
      const fields = { status: String };
      const name = `S${++models}`;
      const Here = connection.model(name, schemaOf(fields, options), name.toLowerCase());
      const There = other.model(name, schemaOf(fields, options), name.toLowerCase());
      const drafts = await Here.insertMany(Array.from({ length: 20 }, () => ({ status: "draft" })));
      // Each process loads the draft and issues it at the same time.
      const saved = await Promise.all(
        drafts.flatMap((draft) =>
          [Here, There].map(async (Model) => {
            const doc = await Model.findById(draft._id);
            doc.status = "issued";
            await doc.save();
            return doc;
          }),
        ),
      );
      const stored = await Here.find().lean();
      const numbers = stored.map((doc) => doc.number);
      assert.ok(numbers.every((n) => Number.isSafeInteger(n)), `every issued document numbered: ${numbers}`);
      assert.equal(new Set(numbers).size, numbers.length, `no number twice: ${numbers}`);
      // Both processes' documents hold the one number stored (the loser reads it back).
      for (const doc of saved) assert.equal(doc.number, stored.find((s) => s._id.equals(doc._id)).number);
    });

    test("bad periodic and when options are refused when the schema is defined; a bad date on save writes nothing", async () => {
      const refused = (options, code, option) => {
        assert.throws(() => schemaOf({ status: String, at: Date }, { field: "n", ...options }), (error) => {
          assert.equal(error.code, code, error.message);
          if (option !== undefined) assert.equal(error.details?.option ?? error.details?.argument, option, error.message);
          return true;
        });
      };
      refused({ reset: "yearly", timeZone: "Atlantis/Capital" }, "INVALID_OPTION", "timeZone");
      refused({ reset: "yearly", yearStart: 13 }, "INVALID_OPTION", "yearStart");
      refused({ format: "{yyyy}-{seq}", formatField: "ref" }, "INVALID_FORMAT");
      refused({ dateField: "at" }, "INVALID_ARGUMENT", "dateField");
      refused({ reset: "yearly", dateField: "n" }, "INVALID_ARGUMENT", "dateField");
      refused({ when: { status: { $in: ["issued"] } } }, "INVALID_OPTION", "when");
      refused({ when: "issued" }, "INVALID_OPTION", "when");
      refused({ when: {} }, "INVALID_OPTION", "when");
      const Invoice = model({ at: Date, label: String }, { field: "n", dateField: "at", sequence: `bad${models}`, ...YEARLY, formatField: "ref" });
      for (const doc of [{ label: "no date" }, { at: new Date(8.64e15) }]) {
        await assert.rejects(Invoice.create(doc), (error) => {
          assert.equal(error.code, "INVALID_DATE", error.message);
          assert.equal(error.details.argument, "dateField");
          return true;
        });
      }
      assert.equal(await Invoice.countDocuments(), 0);
      assert.equal(await connection.collection("counters").countDocuments({ _id: { $regex: `^bad` } }), 0);
    });
  });
}
