// The documents the sidecar scenarios number: small orders with ids known in advance.
import { ObjectId } from "mongodb";

/** `count` orders with fresh ObjectIds (and the fields of `extra`). */
export function orders(count, extra = {}) {
  return Array.from({ length: count }, (_, i) => ({ _id: new ObjectId(), item: `item ${i % 97}`, qty: (i % 9) + 1, ...extra }));
}

/** Inserts `documents` in ordered batches of 1,000 (the writers of a backlog). */
export async function insertBacklog(collection, documents) {
  for (let i = 0; i < documents.length; i += 1000) await collection.insertMany(documents.slice(i, i + 1000), { ordered: true });
}

/** All commands in a proxy's counts. */
export const totalCommands = (counts) => Object.values(counts.commands).reduce((a, b) => a + b, 0);
