// The mongoose plugin: numbers on save(), create() and insertMany() (one counter reservation
// for the whole batch), per tenant, with a formatted reference.
import mongoose from "mongoose";
import { sequencePlugin } from "mongo-seq/mongoose";

const orderSchema = new mongoose.Schema({ tenantId: String, item: String });
orderSchema.plugin(sequencePlugin, {
  field: "orderNo",
  sequence: "orders",
  scope: ["tenantId"], // one counter per tenant
  format: "ORD-{seq:06}",
  formatField: "orderRef",
});

const uri = process.env.MONGODB_URI ?? "mongodb://127.0.0.1:27017";
const connection = await mongoose.createConnection(uri, { dbName: process.env.EXAMPLE_DB ?? "mongo_seq_example" }).asPromise();
try {
  const Order = connection.model("Order", orderSchema);
  const saved = await new Order({ tenantId: "acme", item: "anvil" }).save();
  console.log(`saved ${saved.orderRef}`);
  const batch = await Order.insertMany([
    { tenantId: "acme", item: "rocket" },
    { tenantId: "globex", item: "magnet" },
    { tenantId: "acme", item: "glue", orderNo: 500 }, // a number the application sets is kept
  ]);
  console.log(`inserted ${batch.map((order) => `${order.tenantId}:${order.orderRef}`).join(", ")}`);
  await Order.setNext(1000, { scope: { tenantId: "globex" } });
  console.log(`next globex order: ${(await Order.create({ tenantId: "globex", item: "laser" })).orderRef}`);
} finally {
  await connection.close();
}
