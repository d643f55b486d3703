// Imported first by each README code block that readme-code.test.mjs runs: gives every
// database the block opens a name of its own (`app` → `<README_DB_PREFIX>_app`, dropped at the
// end, so blocks never see each other's counters and a real server's `app` is left alone),
// reports the values of the statements the test instrumented, and closes what the block opened.
import { MongoClient } from "mongodb";
import { encode } from "./readme-values.mjs";

const prefix = process.env.README_DB_PREFIX;
const clients = new Set();
const databases = new Set();

const connect = MongoClient.prototype.connect;
MongoClient.prototype.connect = function (...args) {
  clients.add(this);
  return connect.apply(this, args);
};
const db = MongoClient.prototype.db;
MongoClient.prototype.db = function (name, options) {
  const real = name === undefined ? name : `${prefix}_${name}`;
  if (real !== undefined) databases.add(real);
  return db.call(this, real, options);
};

globalThis.__readmeValue = (line, value) => {
  process.stdout.write(`README-VALUE ${JSON.stringify({ line, value: encode(value) })}\n`);
  return value;
};

globalThis.__readmeDone = async () => {
  for (const client of clients) {
    for (const name of databases) await client.db(name.slice(prefix.length + 1)).dropDatabase().catch(() => {});
    await client.close();
  }
};
