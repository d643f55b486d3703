// Imported first by each README code block that readme-code.test.mjs runs: gives every
// database the block opens a name of its own (`app` → `<README_DB_PREFIX>_app`, dropped at the
// end, so blocks never see each other's counters and a real server's `app` is left alone),
// reports the values of the statements the test instrumented, and closes what the block opened.
import { MongoClient } from "mongodb";
import mongoose from "mongoose";
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

// mongoose keeps its own driver: its connections get the same treatment (the database is
// dropped when the connection closes, by the block or at the end).
const connections = new Set();
const createConnection = mongoose.createConnection;
mongoose.createConnection = function (uri, options = {}, ...rest) {
  const dbName = options.dbName === undefined ? undefined : `${prefix}_${options.dbName}`;
  const connection = createConnection.call(this, uri, { ...options, dbName }, ...rest);
  const close = connection.close.bind(connection);
  connection.close = async (...args) => {
    connections.delete(connection);
    await connection.dropDatabase().catch(() => {});
    return close(...args);
  };
  connections.add(connection);
  return connection;
};

globalThis.__readmeValue = (line, value) => {
  process.stdout.write(`README-VALUE ${JSON.stringify({ line, value: encode(value) })}\n`);
  return value;
};

globalThis.__readmeDone = async () => {
  for (const connection of connections) await connection.close().catch(() => {});
  for (const client of clients) {
    for (const name of databases) await client.db(name.slice(prefix.length + 1)).dropDatabase().catch(() => {});
    await client.close();
  }
};
