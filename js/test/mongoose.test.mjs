// mongo-seq/mongoose against the test server, with both mongoose majors the package supports
// (mongoose 8, the devDependency `mongoose`; mongoose 9, installed as `mongoose9`): save,
// create, insertMany (its counter commands counted), bulkWrite, pre-set values, scopes,
// formats, several fields, a counter shared by models, the statics, bad options, processes.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import mongoose8 from "mongoose";
import mongoose9 from "mongoose9";
import { sequencePlugin } from "mongo-seq/mongoose";
import { core, isMongoSeqError } from "mongo-seq";
import { startMongo, uniqueDbName, countCommands } from "../../tests/harness/mongo.mjs";
import { runTogether } from "../../tests/harness/processes.mjs";
import { LEAKS } from "./support.mjs";

const worker = fileURLToPath(new URL("workers/mongoose-insert.mjs", import.meta.url));
let server;
before(async () => (server = await startMongo()));
after(async () => server?.stop());

for (const [label, mongoose] of [
  ["mongoose 8", mongoose8],
  ["mongoose 9", mongoose9],
]) {
  describe(`${label} (${mongoose.version})`, () => {
    const { Schema } = mongoose;
    let connection;
    let commands;
    let counterCommands = 0; // every command on the counters collection
    before(async () => {
      connection = await mongoose.createConnection(server.uri, { dbName: uniqueDbName(`mongoose${mongoose.version}`), monitorCommands: true }).asPromise();
      commands = countCommands(connection.getClient());
      connection.getClient().on("commandStarted", (event) => {
        if (event.command[event.commandName] === "counters") counterCommands += 1;
      });
    });
    after(async () => {
      await connection?.dropDatabase().catch(() => {});
      await connection?.close();
    });
    let models = 0;
    /** A model of a fresh collection with the plugin applied once per options object. */
    const model = (fields, ...plugins) => {
      const schema = new Schema(fields);
      for (const options of plugins) schema.plugin(sequencePlugin, options);
      models += 1;
      return connection.model(`M${models}`, schema, `m${models}`);
    };
    const counters = () => connection.collection("counters");

    test("save(): numbers new documents in order, the tutorial's counter document; never renumbers on update", async () => {
      const Order = model({ item: String }, { field: "orderNo" });
      const saved = [];
      for (const item of ["a", "b", "c"]) saved.push(await new Order({ item }).save());
      assert.deepEqual(saved.map((doc) => doc.orderNo), [1, 2, 3]);
      assert.deepEqual(await counters().findOne({ _id: "m1.orderNo" }), { _id: "m1.orderNo", seq: 3, definition: { start: 1, step: 1 }, definitionDigest: "b1992bd103fd143e" });
      saved[0].item = "changed";
      await saved[0].save();
      await Order.updateOne({ _id: saved[1]._id }, { item: "changed too" });
      await Order.findOneAndUpdate({ _id: saved[2]._id }, { item: "and this" });
      assert.deepEqual((await Order.find().sort({ orderNo: 1 }).lean()).map((doc) => doc.orderNo), [1, 2, 3]);
      assert.equal(await Order.current(), 3, "nothing more was taken");
    });

    test("create(): one document, or many (one reservation for the documents saved together)", async () => {
      const Ticket = model({ title: String }, { field: "ticketNo" });
      assert.equal((await Ticket.create({ title: "one" })).ticketNo, 1);
      commands.reset();
      const many = await Ticket.create(Array.from({ length: 20 }, (_, i) => ({ title: `t${i}` })));
      assert.deepEqual(many.map((doc) => doc.ticketNo).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 2));
      assert.equal(commands.count("findAndModify"), 1, "saves started together share one $inc");
    });

    test("insertMany() of 1,000 documents: ONE counter command for the whole batch", async () => {
      const Event = model({ kind: String }, { field: "seq" });
      await Event.init();
      await Event.create({ kind: "first" }); // the counter exists: the batch is a pure $inc
      commands.reset();
      const counterBefore = counterCommands;
      const inserted = await Event.insertMany(Array.from({ length: 1000 }, (_, i) => ({ kind: `k${i}` })));
      const counterCalls = counterCommands - counterBefore;
      // The figure of the closing note (`node --test js/test/mongoose.test.mjs | grep MONGOOSE-INSERTMANY`).
      console.log(`MONGOOSE-INSERTMANY ${label}: ${counterCalls} command(s) on the counters for 1000 documents; all commands: ${JSON.stringify(commands.snapshot())}`);
      assert.equal(counterCalls, 1);
      assert.equal(commands.count("findAndModify"), 1);
      assert.deepEqual(inserted.map((doc) => doc.seq), Array.from({ length: 1000 }, (_, i) => i + 2));
      assert.equal(await Event.countDocuments({ seq: { $exists: false } }), 0);
      // The lean form too (no hydration): numbered in the same way.
      commands.reset();
      await Event.insertMany([{ kind: "x" }, { kind: "y" }], { lean: true });
      assert.deepEqual((await Event.find({ kind: { $in: ["x", "y"] } }).sort({ seq: 1 }).lean()).map((doc) => doc.seq), [1002, 1003]);
      assert.equal(commands.count("findAndModify"), 1);
    });

    test("bulkWrite() insertOne operations are numbered, one reservation per batch; updates are not", async () => {
      const Line = model({ text: String }, { field: "lineNo" });
      await Line.create({ text: "first" });
      commands.reset();
      await Line.bulkWrite([
        { insertOne: { document: { text: "a" } } },
        { updateOne: { filter: { text: "first" }, update: { text: "first!" } } },
        { insertOne: { document: { text: "b" } } },
        { insertOne: { document: { text: "c", lineNo: 500 } } },
      ]);
      assert.equal(commands.count("findAndModify"), 1);
      const lines = await Line.find().sort({ lineNo: 1 }).lean();
      assert.deepEqual(lines.map((doc) => [doc.text, doc.lineNo]), [["first!", 1], ["a", 2], ["b", 3], ["c", 500]]);
    });

    test("values the application sets are kept (save, insertMany); the formatted id follows the number", async () => {
      const Invoice = model({ amount: Number }, { field: "invoiceNo", format: "INV-{seq:04}", formatField: "invoiceRef" });
      const kept = await new Invoice({ amount: 1, invoiceNo: 77, invoiceRef: "MANUAL" }).save();
      assert.deepEqual([kept.invoiceNo, kept.invoiceRef], [77, "MANUAL"]);
      const docs = await Invoice.insertMany([{ amount: 2 }, { amount: 3, invoiceNo: 900 }, { amount: 4 }]);
      assert.deepEqual(docs.map((doc) => [doc.invoiceNo, doc.invoiceRef]), [[1, "INV-0001"], [900, "INV-0900"], [2, "INV-0002"]]);
      assert.equal(await Invoice.current(), 2, "pre-set values take no number");
      assert.deepEqual(await Invoice.seedFromMax(), { last: 900, next: 901 });
      assert.equal((await Invoice.create({ amount: 5 })).invoiceNo, 901);
    });

    test("a value the application sets that mongoose cannot cast is not replaced by a number: its CastError reaches the caller", async () => {
      const Invoice = model({ amount: Number }, { field: "invoiceNo", format: "INV-{seq:04}", formatField: "invoiceRef" });
      for (const invoiceNo of ["abc", NaN, { n: 1 }]) {
        await assert.rejects(Invoice.create({ amount: 1, invoiceNo }), (error) => error.errors?.invoiceNo?.name === "CastError");
        await assert.rejects(Invoice.insertMany([{ amount: 2, invoiceNo }]), (error) => error.errors?.invoiceNo?.name === "CastError");
      }
      await assert.rejects(Invoice.create({ amount: 3, invoiceRef: { not: "a string" } }), (error) => error.errors?.invoiceRef?.name === "CastError");
      assert.equal(await Invoice.countDocuments(), 0, "nothing written");
      assert.equal(await Invoice.current(), 1, "only the document with the uncastable formatted id took a number");
    });

    test("scoped and formatted: one counter per tenant, one reservation per tenant in a batch; a required field", async () => {
      const tenants = [new mongoose.Types.ObjectId(), new mongoose.Types.ObjectId()];
      const Order = model(
        { tenantId: { type: Schema.Types.ObjectId, required: true }, orderNo: { type: Number, required: true }, item: String },
        { field: "orderNo", sequence: "orders", block: 50, scope: ["tenantId"], format: "ORD-{seq:06}", formatField: "orderRef" },
      );
      const first = await new Order({ tenantId: tenants[0], item: "a" }).save();
      assert.deepEqual([first.orderNo, first.orderRef], [1, "ORD-000001"]);
      commands.reset();
      // Scope values as mongoose casts them: the string id counts on the same tenant's counter.
      const batch = await Order.insertMany([
        { tenantId: tenants[1], item: "b" },
        { tenantId: String(tenants[0]), item: "c" },
        { tenantId: tenants[1], item: "d" },
      ]);
      assert.deepEqual(batch.map((doc) => doc.orderRef), ["ORD-000001", "ORD-000002", "ORD-000002"]);
      assert.equal(commands.count("findAndModify"), 1, "tenant 0 still has its block of 50; tenant 1 reserves once");
      assert.deepEqual((await counters().find({ _id: /^orders\// }).toArray()).map((c) => c.seq).sort(), [50, 50]);
      assert.equal(await Order.current({ scope: { tenantId: tenants[1] } }), 50);
    });

    test("several numbered fields on one schema; a counter shared by two models", async () => {
      const Both = model({ name: String }, { field: "a" }, { field: "b", start: 100, step: 10 });
      const doc = await Both.create({ name: "x" });
      assert.deepEqual([doc.a, doc.b], [1, 100]);
      const many = await Both.insertMany([{ name: "y" }, { name: "z" }]);
      assert.deepEqual(many.map((d) => [d.a, d.b]), [[2, 110], [3, 120]]);
      await assert.rejects(() => Both.current(), /several fields \(a, b\)/);
      assert.equal(await Both.current({ field: "b" }), 120);

      const Cat = model({ name: String }, { field: "id", sequence: "animals" });
      const Dog = model({ name: String }, { field: "id", sequence: "animals" });
      const ids = [(await Cat.create({ name: "tom" })).id, (await Dog.create({ name: "rex" })).id, (await Cat.create({ name: "kit" })).id];
      assert.deepEqual(ids, [1, 2, 3]);
      assert.equal(Cat.sequence(), Dog.sequence(), "one Sequence object: one counter, one block");
    });

    test("statics: setNext (never backwards unless forced), current, seedFromMax", async () => {
      const Item = model({ name: String }, { field: "itemNo" });
      assert.equal(await Item.current(), null);
      await Item.setNext(1000);
      assert.equal((await Item.create({ name: "a" })).itemNo, 1000);
      await assert.rejects(() => Item.setNext(5), (error) => isMongoSeqError(error) && error.code === "BACKWARDS_REFUSED");
      await Item.setNext(5, { force: true });
      assert.equal((await Item.create({ name: "b" })).itemNo, 5);
      await Item.collection.insertOne({ name: "imported", itemNo: 4000 });
      assert.deepEqual(await Item.seedFromMax(), { last: 4000, next: 4001 });
      assert.equal(await Item.current(), 4000);
      assert.equal((await Item.create({ name: "c" })).itemNo, 4001);
    });

    test("bad options: a MongoSeqError when the schema is defined, naming the option; bad documents: nothing written", async () => {
      const refused = (options, code, says) => {
        const schema = new Schema({ name: String });
        let caught;
        try {
          schema.plugin(sequencePlugin, options);
        } catch (error) {
          caught = error;
        }
        assert.ok(isMongoSeqError(caught), `${JSON.stringify(options)}: ${caught}`);
        assert.equal(caught.code, code, caught.message);
        assert.match(caught.message, says);
        assert.doesNotMatch(caught.message, LEAKS);
      };
      refused(undefined, "INVALID_OPTION", /must be an object/);
      refused({}, "INVALID_OPTION", /`field`: is required/);
      refused({ field: "n", block: 0 }, "INVALID_OPTION", /`block`/);
      refused({ field: "n", step: 0 }, "INVALID_STEP", /step/);
      refused({ field: "n", colour: "red" }, "UNKNOWN_OPTION", /colour/);
      // The plugin's own options and every sequence option the core knows but `name` (its `sequence`).
      const known = ["field", "sequence", "formatField", "counters", "when", "dateField", "seedFromMax", ...core.optionKeys().filter((key) => key !== "name")];
      assert.deepEqual(core.optionKeys().slice(0, 3), ["name", "start", "step"]);
      refused({ field: "n", colour: "red" }, "UNKNOWN_OPTION", new RegExp(`\\(known options: ${known.join(", ")}\\)$`));
      refused({ field: "n", format: "X{seq}" }, "INVALID_OPTION", /formatField/);
      refused({ field: "n", formatField: "ref" }, "INVALID_OPTION", /^invalid option `format`: is required with `formatField`/);
      refused({ field: "n", sequence: "a/b" }, "INVALID_NAME", /a\/b/);
      refused({ field: "n", counterField: "_id" }, "INVALID_OPTION", /counterField/);
      refused({ field: "$n" }, "INVALID_ARGUMENT", /field/);
      refused({ field: "_id" }, "INVALID_OPTION", /declare `_id: Number`/);
      const twice = new Schema({});
      twice.plugin(sequencePlugin, { field: "n" });
      assert.throws(() => twice.plugin(sequencePlugin, { field: "n" }), /already written by mongo-seq/);

      // A document without its scope value: refused before anything is reserved or written.
      const Scoped = model({ tenant: String, name: String }, { field: "n", scope: ["tenant"] });
      const before = await counters().countDocuments();
      for (const attempt of [() => Scoped.create({ name: "x" }), () => Scoped.insertMany([{ tenant: "t", name: "ok" }, { name: "no tenant" }])]) {
        await assert.rejects(attempt, (error) => isMongoSeqError(error) && /tenant/.test(error.message));
      }
      assert.equal(await Scoped.countDocuments(), 0, "no document written");
      assert.equal(await counters().countDocuments(), before, "no counter written");
    });

    /** sequencePlugin on a fresh schema of `fields` must throw a MongoSeqError `code` matching `says`. */
    const refusedAtPlugin = (fields, options, code, says) => {
      const schema = fields instanceof Schema ? fields : new Schema(fields);
      let caught;
      try {
        schema.plugin(sequencePlugin, options);
      } catch (error) {
        caught = error;
      }
      assert.ok(isMongoSeqError(caught), `${inspect(options)}: ${caught}`);
      assert.equal(caught.code, code, caught.message);
      assert.match(caught.message, says);
      assert.doesNotMatch(caught.message, LEAKS);
    };

    // What mongoose-sequence and @typegoose/auto-increment refuse or number.
    test("plugin() refuses a field that cannot hold a number, naming the path and its declared type", () => {
      const Child = new Schema({ name: String });
      refusedAtPlugin({ code: String }, { field: "code" }, "INVALID_OPTION", /`field`: `code` is declared as a String in the schema, which cannot hold the number: declare it Number/);
      refusedAtPlugin({ at: Date }, { field: "at" }, "INVALID_OPTION", /`at` is declared as a Date/);
      refusedAtPlugin({ ok: Boolean }, { field: "ok" }, "INVALID_OPTION", /`ok` is declared as a Boolean/);
      refusedAtPlugin({ tags: [Number] }, { field: "tags" }, "INVALID_OPTION", /`tags` is an array in the schema/);
      refusedAtPlugin({ child: Child }, { field: "child" }, "INVALID_OPTION", /`child` is a sub-document in the schema/);
      refusedAtPlugin({ parent: { nested: Number } }, { field: "parent" }, "INVALID_OPTION", /`parent` is a nested object in the schema, not a field: name the field inside it/);
      refusedAtPlugin({ items: [Child] }, { field: "items.n" }, "INVALID_OPTION", /`items.n` lies inside `items`, which is an array/);
      refusedAtPlugin({ code: String }, { field: "code.n" }, "INVALID_OPTION", /`code.n` lies inside `code`, which is declared as a String/);
      refusedAtPlugin({ ref: Number }, { field: "n", format: "R{seq}", formatField: "ref" }, "INVALID_OPTION", /`formatField`: `ref` is declared as a Number in the schema: the formatted id is a string/);
      refusedAtPlugin({}, { field: "a.b", format: "R{seq}", formatField: "a" }, "INVALID_ARGUMENT", /formatField/);
      refusedAtPlugin({}, { field: "n", counters: "system.counters" }, "INVALID_OPTION", /`counters`: must not start with `system\.`/);
      refusedAtPlugin({}, { field: "n", counters: "my$counters" }, "INVALID_OPTION", /`counters`: must not contain `\$`/);
      refusedAtPlugin({}, { field: "n", sequence: 5 }, "INVALID_OPTION", /`sequence`: must be a sequence name, or a function/);
    });

    test("dotted paths: a nested object's field, a sub-document's field from the parent, a path the schema lacks (declared Number)", async () => {
      const Child = new Schema({ label: String, no: Number }, { _id: false });
      const Doc = model({ parent: { nested: Number, other: String }, child: Child }, { field: "parent.nested" }, { field: "child.no", format: "C{seq:03}", formatField: "child.ref" }, { field: "meta.seq" });
      const first = await Doc.create({ parent: { other: "x" }, child: { label: "a" } });
      assert.deepEqual([first.parent.nested, first.child.no, first.child.ref, first.meta.seq], [1, 1, "C001", 1]);
      const batch = await Doc.insertMany([{ child: { label: "b" } }, { child: { label: "c" } }]);
      assert.deepEqual(batch.map((d) => [d.parent.nested, d.child.no, d.meta.seq]), [[2, 2, 2], [3, 3, 3]]);
      const stored = await Doc.findById(first._id).lean();
      assert.deepEqual([stored.parent.nested, stored.child.no, stored.child.ref, stored.meta.seq], [1, 1, "C001", 1]);
      assert.equal(Doc.schema.path("meta.seq").instance, "Number", "a missing path is declared as a Number");
      assert.equal(await Doc.current({ field: "parent.nested" }), 3);
    });

    test("a sub-document schema with the plugin (typegoose's suite): numbered when the owner is created, saved or inserted", async () => {
      const SubDoc = new Schema({ _id: Number, someField: { type: String, required: true } });
      SubDoc.plugin(sequencePlugin, { field: "_id" });
      const Parent = model({ nested: { type: SubDoc, required: true }, items: [SubDoc] });
      const doc1 = await Parent.create({ nested: { someField: "hello1" } });
      assert.equal(doc1.nested._id, 1);
      await doc1.save();
      assert.equal(doc1.nested._id, 1, "not renumbered on save");
      const doc2 = await Parent.create({ nested: { someField: "hello2" }, items: [{ someField: "i1" }, { someField: "i2" }] });
      assert.deepEqual([doc2.nested._id, doc2.items.map((item) => item._id)], [2, [1, 2]]);
      doc2.items.push({ someField: "i3" });
      await doc2.save();
      assert.deepEqual(doc2.items.map((item) => item._id), [1, 2, 3], "a new array element is numbered, the others kept");
      const [doc3] = await Parent.insertMany([{ nested: { someField: "hello3" } }]);
      assert.equal(doc3.nested._id, 3);
      const name = Parent.collection.collectionName;
      assert.deepEqual((await counters().find({ _id: { $in: [`${name}.nested._id`, `${name}.items._id`] } }).sort({ _id: 1 }).toArray()).map((c) => [c._id, c.seq]), [
        [`${name}.items._id`, 3],
        [`${name}.nested._id`, 3],
      ]);
    });

    test("sequence as a function of the model: one plugin call shared by several models and discriminators; an empty name refused before anything is reserved", async () => {
      const base = new Schema({ name: String }, { discriminatorKey: "kind" });
      base.plugin(sequencePlugin, { field: "no", sequence: (modelName) => `fn.${modelName}` });
      models += 1;
      const Animal = connection.model(`Animal${models}`, base, `animals${models}`);
      const Cat = Animal.discriminator(`Cat${models}`, new Schema({ lives: Number }));
      const numbers = [(await Animal.create({ name: "a" })).no, (await Cat.create({ name: "c" })).no, (await Cat.create({ name: "d" })).no, (await Animal.create({ name: "b" })).no];
      assert.deepEqual(numbers, [1, 1, 2, 2]);
      assert.equal(await counters().countDocuments({ _id: { $in: [`fn.Animal${models}`, `fn.Cat${models}`] } }), 2);

      const empty = new Schema({ name: String });
      empty.plugin(sequencePlugin, { field: "no", sequence: () => "" });
      models += 1;
      const Empty = connection.model(`Empty${models}`, empty, `empty${models}`);
      const before = await counters().countDocuments();
      await assert.rejects(Empty.create({ name: "x" }), (error) => isMongoSeqError(error) && error.code === "INVALID_OPTION" && /`sequence`: the function returned string "" for the model `Empty\d+`/.test(error.message));
      assert.equal(await Empty.countDocuments(), 0);
      assert.equal(await counters().countDocuments(), before, "nothing reserved");
    });

    test("a Number field stops at 2^53 − 1 before reserving (SEQUENCE_EXHAUSTED saying to declare BigInt); a BigInt field goes past it, stored as a 64-bit integer", async () => {
      const Small = model({ name: String }, { field: "no", sequence: `big.number.${models}` });
      await Small.setNext(2 ** 53 - 1);
      assert.equal((await Small.create({ name: "last" })).no, 2 ** 53 - 1);
      for (const attempt of [() => Small.create({ name: "past" }), () => Small.insertMany([{ name: "p1" }, { name: "p2" }])]) {
        await assert.rejects(attempt, (error) => isMongoSeqError(error) && error.code === "SEQUENCE_EXHAUSTED" && /declared Number .*Schema\.Types\.BigInt/.test(error.message));
      }
      assert.equal(await Small.current(), 2 ** 53 - 1, "nothing reserved past the bound: no number lost");
      assert.equal(await Small.countDocuments(), 1);
      refusedAtPlugin({ no: Number }, { field: "no", max: 2n ** 60n }, "INVALID_OPTION", /`max`: 1152921504606846976 is past what the `no` field is declared Number/);
      refusedAtPlugin({ no: Number }, { field: "no", start: 2n ** 53n }, "INVALID_OPTION", /`start`: .*declare it Schema\.Types\.BigInt/);

      const Big = model({ name: String, no: Schema.Types.BigInt }, { field: "no" });
      await Big.setNext(2n ** 53n + 1n);
      const doc = await Big.create({ name: "big" });
      assert.equal(doc.no, 2n ** 53n + 1n);
      const raw = await Big.collection.findOne({ _id: doc._id }, { promoteLongs: false });
      assert.equal(raw.no._bsontype, "Long");
      assert.equal(raw.no.toString(), "9007199254740993");
    });

    test("several processes saving and inserting on one counter: no number twice, none missing", async () => {
      const dbName = connection.db.databaseName;
      const results = await runTogether(
        worker,
        [0, 1, 2, 3].map((i) => [mongoose === mongoose9 ? "mongoose9" : "mongoose", server.uri, dbName, `w${i}`]),
      );
      const numbers = results.flat();
      assert.equal(numbers.length, 4 * 60);
      assert.equal(new Set(numbers).size, numbers.length, "no duplicates");
      assert.deepEqual([...numbers].sort((a, b) => a - b), Array.from({ length: numbers.length }, (_, i) => i + 1), "no gaps with block 1");
    });
  });
}
