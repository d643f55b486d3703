// Compile-time test of `mongo-seq/mongoose` (ESM declarations), with mongoose's own types.
import { Schema, model, type Model } from "mongoose";
import { sequencePlugin, type SequencePluginOptions, type SequenceStatics } from "mongo-seq/mongoose";
import type { SequenceNumber, CounterState } from "mongo-seq";

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
}
