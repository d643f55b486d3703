// What users moving from the peers look for, in the mongoose plugin (mongoose 8 and 9):
// mongoose-sequence's `counterReset(id)` (every scope of a sequence) as `Model.rewindSequence()`
// and its `doc.setNext(id)`; @typegoose/auto-increment's start after the largest existing value
// (the plugin option `seedFromMax`); a name that is none of the model's sequences, or a sequence
// without a counter, refused where the call means an existing sequence, nothing written.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import mongoose8 from "mongoose";
import mongoose9 from "mongoose9";
import { sequencePlugin } from "mongo-seq/mongoose";
import { isMongoSeqError } from "mongo-seq";
import { startMongo, uniqueDbName } from "../../tests/harness/mongo.mjs";

let server;
before(async () => (server = await startMongo()));
after(async () => server?.stop());

const refused = (code, pattern) => (error) => isMongoSeqError(error) && error.code === code && pattern.test(error.message);

for (const [label, mongoose] of [
  ["mongoose 8", mongoose8],
  ["mongoose 9", mongoose9],
]) {
  describe(`${label} (${mongoose.version})`, () => {
    const { Schema } = mongoose;
    let connection;
    let models = 0;
    before(async () => {
      connection = await mongoose.createConnection(server.uri, { dbName: uniqueDbName(`peers${mongoose.version}`) }).asPromise();
    });
    after(async () => {
      await connection?.dropDatabase().catch(() => {});
      await connection?.close();
    });
    const model = (definition, options) => {
      const schema = new Schema(definition);
      schema.plugin(sequencePlugin, options);
      models += 1;
      return connection.model(`Peer${models}`, schema, `peers${models}`);
    };
    const counters = () => connection.collection("counters");
    const everything = async () => ({ counters: await counters().find().sort({ _id: 1 }).toArray(), ledger: await connection.collection("mongo_seq_ledger").find().toArray() });

    test("Model.rewindSequence(): every scope's counter back to start (counterReset(id)); by name; refused for an unknown name, a sequence without counters, a sidecar's counters unless forced", async () => {
      const Order = model({ tenant: String }, { field: "no", sequence: `orders${models}`, scope: ["tenant"] });
      await Order.create([{ tenant: "a" }, { tenant: "a" }, { tenant: "b" }]);
      assert.deepEqual(await Order.rewindSequence(), { rewound: 2, next: 1 });
      assert.deepEqual((await Order.create({ tenant: "a" })).no, 1);
      assert.deepEqual((await Order.create({ tenant: "b" })).no, 1);
      const name = Order.sequence().name;
      assert.deepEqual(await Order.rewindSequence(name), { rewound: 2, next: 1 });
      const before = await everything();
      await assert.rejects(Order.rewindSequence("wrong"), refused("INVALID_ARGUMENT", /"wrong" is not a sequence of model `Peer\d+` \(its sequences: `orders\d+`\)/));
      await assert.rejects(Order.rewindSequence("wrong", { force: true }), refused("INVALID_ARGUMENT", /not a sequence of model/));
      // A sequence no counter has yet: nothing to rewind, and no counter made.
      const Fresh = model({ name: String }, { field: "no" });
      await assert.rejects(Fresh.rewindSequence(), refused("INVALID_ARGUMENT", /`peers\d+\.no` has no counter: nothing to rewind/));
      assert.deepEqual(await everything(), before, "nothing written");
      // A counter a sidecar keeps (a lease epoch: maybe gapless) is refused unless forced.
      const Kept = model({ name: String }, { field: "no", sequence: `kept${models}` });
      await Kept.create({ name: "x" });
      await counters().updateOne({ _id: Kept.sequence().name }, { $set: { epoch: 3 } });
      await assert.rejects(Kept.rewindSequence(), (error) => isMongoSeqError(error) && error.code === "REWIND_REFUSED");
      assert.deepEqual(await Kept.rewindSequence({ force: true }), { rewound: 1, next: 1 });
    });

    test("doc.setNext(): numbers a document that has no number (new or stored), refuses one that has, and a name none of the model's sequences has", async () => {
      const Invoice = model({ status: String }, { field: "no", sequence: `invoices${models}`, when: { status: "issued" }, format: "INV-{seq:03}", formatField: "ref" });
      const draft = await Invoice.create({ status: "draft" });
      assert.equal(draft.no, undefined);
      // Stored, not matching `when`: numbered on purpose, written at once.
      assert.equal(await draft.setNext(), 1);
      assert.equal(draft.ref, "INV-001");
      assert.deepEqual(await Invoice.collection.findOne({ _id: draft._id }, { projection: { _id: 0, no: 1, ref: 1, status: 1 } }), { status: "draft", no: 1, ref: "INV-001" });
      // New: in hand, its save writes it.
      const fresh = new Invoice({ status: "draft" });
      assert.equal(await fresh.setNext(Invoice.sequence().name), 2);
      await fresh.save();
      assert.equal((await Invoice.findById(fresh._id)).no, 2);
      const before = await everything();
      await assert.rejects(draft.setNext(), refused("INVALID_ARGUMENT", /already has number 1 in `no`: a document is numbered once/));
      await assert.rejects(new Invoice({ status: "draft" }).setNext("invoices"), refused("INVALID_ARGUMENT", /"invoices" is not a sequence of model `Peer\d+`/));
      await assert.rejects(new Invoice({}).setNext({ colour: 1 }), refused("UNKNOWN_OPTION", /colour/));
      assert.deepEqual(await everything(), before, "nothing reserved or written");
      assert.equal(await Invoice.current(), 2);
    });

    test("doc.setNext() of a sequence a sidecar keeps: GAPLESS_REFUSED, nothing reserved, unless forced; rewindSequence says REWIND_REFUSED for a gapless trigger's counter (its definition records it)", async () => {
      const Kept = model({ name: String }, { field: "no", sequence: `keptdoc${models}` });
      await Kept.create({ name: "first" });
      const name = Kept.sequence().name;
      const stored = await Kept.create({ name: "stored" });
      await Kept.collection.updateOne({ _id: stored._id }, { $unset: { no: "" } });
      stored.no = undefined;
      const gapless = (error) => isMongoSeqError(error) && error.code === "GAPLESS_REFUSED" && error.details.name === name && /nothing was reserved or written/.test(error.message);
      // Each way the core knows a sidecar keeps it: a lease epoch, a pending intent, a definition recording gapless.
      for (const [set, unset] of [[{ epoch: 3 }, { epoch: "" }], [{ intent: { first: 9, count: 1 } }, { intent: "" }], [{ "definition.gapless": true }, { "definition.gapless": "" }]]) {
        await counters().updateOne({ _id: name }, { $set: set });
        const before = await everything();
        await assert.rejects(new Kept({ name: "new" }).setNext(), gapless, JSON.stringify(set));
        await assert.rejects(stored.setNext(name), gapless, JSON.stringify(set));
        assert.deepEqual(await everything(), before, "nothing reserved or written");
        assert.equal((await Kept.findById(stored._id)).no, undefined);
        await counters().updateOne({ _id: name }, { $unset: unset });
      }
      // The rule is the sequence's: a counter kept in one scope refuses the others too.
      const Scoped = model({ tenant: String }, { field: "no", sequence: `keptscoped${models}`, scope: ["tenant"] });
      await Scoped.create({ tenant: "a" });
      await counters().updateOne({ _id: `${Scoped.sequence().name}/tenant=a` }, { $set: { epoch: 1 } });
      await assert.rejects(new Scoped({ tenant: "b" }).setNext(), (error) => isMongoSeqError(error) && error.code === "GAPLESS_REFUSED" && /tenant=a/.test(error.message));
      // Forced: numbered anyway.
      await counters().updateOne({ _id: name }, { $set: { epoch: 3 } });
      assert.equal(await stored.setNext(name, { force: true }), 3);
      assert.equal((await Kept.findById(stored._id)).no, 3);
      const fresh = new Kept({ name: "forced" });
      assert.equal(await fresh.setNext({ force: true }), 4);
      await assert.rejects(new Kept({}).setNext({ force: "yes" }), refused("INVALID_OPTION", /`force`: must be a boolean/));
      // A gapless trigger's counter records `gapless` in its definition: rewindSequence says it is kept (not SEQUENCE_CONFLICT).
      await counters().updateOne({ _id: name }, { $set: { "definition.gapless": true } });
      await assert.rejects(Kept.rewindSequence(), (error) => isMongoSeqError(error) && error.code === "REWIND_REFUSED" && /the sequence is gapless: 1 counter records it/.test(error.message));
    });

    test("sequence as typegoose's overwriteModelName: the same function (modelName, model) names the sequence", async () => {
      const overwriteModelName = (modelName, model) => `${modelName}-in-${model.collection.collectionName}`;
      const Item = model({ name: String }, { field: "no", sequence: overwriteModelName });
      assert.equal((await Item.create({ name: "a" })).no, 1);
      assert.equal(Item.sequence().name, `${Item.modelName}-in-${Item.collection.collectionName}`);
      assert.equal((await counters().findOne({ _id: Item.sequence().name }))?.seq, 1);
    });

    test("seedFromMax: the first number follows the largest one already in the collection (@typegoose/auto-increment's start), per scope, without a call", async () => {
      const definition = { _id: Number, name: String };
      const User = model(definition, { field: "_id", seedFromMax: true });
      await User.collection.insertMany([{ _id: 10, name: "imported" }, { _id: 4, name: "older" }]);
      assert.equal((await User.create({ name: "next" }))._id, 11, "a collection that holds _id 10 gets 11");
      assert.deepEqual((await User.insertMany([{ name: "a" }, { name: "b" }])).map((u) => u._id), [12, 13]);
      // A second process (another connection, its own seed) continues, never backwards.
      const other = await mongoose.createConnection(server.uri, { dbName: connection.name }).asPromise();
      try {
        const schema = new Schema(definition);
        schema.plugin(sequencePlugin, { field: "_id", seedFromMax: true, sequence: User.sequence().name });
        const Again = other.model(User.modelName, schema, User.collection.collectionName);
        assert.equal((await Again.create({ name: "elsewhere" }))._id, 14);
      } finally {
        await other.close();
      }
      // Per scope: each tenant after its own largest number.
      const Ticket = model({ tenant: String, no: Number }, { field: "no", scope: ["tenant"], seedFromMax: true });
      await Ticket.collection.insertMany([{ tenant: "a", no: 7 }, { tenant: "b", no: 100 }]);
      const tickets = await Ticket.insertMany([{ tenant: "a" }, { tenant: "b" }, { tenant: "c" }]);
      assert.deepEqual(tickets.map((t) => t.no), [8, 101, 1]);
      // Without the option, the counter starts at start, as before.
      const Plain = model({ no: Number }, { field: "no" });
      await Plain.collection.insertOne({ no: 50 });
      assert.equal((await Plain.create({})).no, 1);
      // Bad values, and a sequence that resets (the largest number belongs to no period), refused by plugin().
      assert.throws(() => new Schema({}).plugin(sequencePlugin, { field: "no", seedFromMax: "yes" }), refused("INVALID_OPTION", /`seedFromMax`: must be a boolean/));
      assert.throws(() => new Schema({}).plugin(sequencePlugin, { field: "no", seedFromMax: true, reset: "yearly" }), (error) => isMongoSeqError(error) && error.code === "INVALID_OPTION" && error.details.option === "seedFromMax");
    });
  });
}
