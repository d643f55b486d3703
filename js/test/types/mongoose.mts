// Compile-time test of `mongo-seq/mongoose` (ESM declarations), with mongoose's own types.
import { Schema, model, type Model } from "mongoose";
import { sequencePlugin, type SequencePluginOptions, type SequenceStatics, type SequenceMethods } from "mongo-seq/mongoose";
import type { SequenceNumber, CounterState, RewindOutcome } from "mongo-seq";

interface Order {
  tenantId: string;
  orderNo?: number;
  orderRef?: string;
}

export async function usage(): Promise<void> {
  const options: SequencePluginOptions = { field: "orderNo", sequence: "orders", block: 50, scope: ["tenantId"], format: "ORD-{seq:06}", formatField: "orderRef" };
  const schema = new Schema<Order, Model<Order> & SequenceStatics>({ tenantId: String, orderNo: Number, orderRef: String });
  schema.plugin(sequencePlugin, options);
  const Orders = model<Order, Model<Order> & SequenceStatics>("Order", schema);
  await Orders.setNext(100, { scope: { tenantId: "t1" } });
  const current: SequenceNumber | null = await Orders.current({ scope: { tenantId: "t1" } });
  const seeded: CounterState = await Orders.seedFromMax({ field: "orderNo", scope: { tenantId: "t1" } });
  const next: SequenceNumber = await Orders.sequence().next({ tenantId: "t1" });
  void [current, seeded, next];
  // Business document series: a yearly series numbered once an invoice is issued.
  const invoiceOptions: SequencePluginOptions = { field: "number", formatField: "ref", reset: "yearly", timeZone: "Europe/Paris", format: "INV-{yyyy}-{seq:06}", dateField: "issuedAt", when: { status: "issued" } };
  const byFunction: SequencePluginOptions = { field: "number", when: (doc) => doc.status === "issued" };
  const invoices = new Schema<Order, Model<Order> & SequenceStatics>({ tenantId: String });
  invoices.plugin(sequencePlugin, invoiceOptions);
  const Invoices = model<Order, Model<Order> & SequenceStatics>("Invoice", invoices);
  const outcome = await Invoices.assignNumbers({ filter: { tenantId: "t1" }, sort: { issuedAt: 1 } });
  void [byFunction, outcome.assigned.length];
  // The peers' calls: counterReset(id), doc.setNext(id), a start after the existing values.
  const users = new Schema<Order, Model<Order, {}, SequenceMethods> & SequenceStatics, SequenceMethods>({ tenantId: String });
  users.plugin(sequencePlugin, { field: "_id", seedFromMax: true });
  const Users = model<Order, Model<Order, {}, SequenceMethods> & SequenceStatics>("User", users);
  const rewound: RewindOutcome = await Users.rewindSequence("User._id", { force: true });
  const rewindField: RewindOutcome = await Users.rewindSequence({ field: "_id" });
  const numbered: SequenceNumber = await new Users({ tenantId: "t1" }).setNext();
  const byName: SequenceNumber = await new Users({ tenantId: "t1" }).setNext("User._id");
  const forced: SequenceNumber = await new Users({ tenantId: "t1" }).setNext("User._id", { force: true });
  const forcedField: SequenceNumber = await new Users({ tenantId: "t1" }).setNext({ field: "_id", force: true });
  void [rewound, rewindField, numbered, byName, forced, forcedField];
  // typegoose's overwriteModelName moves over as it is: (modelName, model) => name.
  const named: SequencePluginOptions = { field: "n", sequence: (modelName, model) => `${modelName}.${model.collection.collectionName}` };
  void named;
  // @ts-expect-error seedFromMax is a boolean
  const badSeed: SequencePluginOptions = { field: "n", seedFromMax: "yes" };
  void badSeed;
  // @ts-expect-error when holds equalities to plain values
  const bad: SequencePluginOptions = { field: "n", when: { status: ["issued"] } };
  void bad;
}
