// Runs one unified-format test: its entities, initial data, operations, expected events and
// outcome. Returns { status: "passed" | "failed" | "skipped", reason }.
import { MongoClient, MongoServerError, MongoBulkWriteError, MongoError } from "mongodb";
import { match, MatchError, numeric } from "./match.mjs";
import { run, UnsupportedOperation, bulkResult } from "./operations.mjs";

// Commands the unified format never expects events of (sensitive ones, and fail points).
const SENSITIVE = new Set(["hello", "ismaster", "saslstart", "saslcontinue", "getnonce", "authenticate", "createuser", "updateuser", "copydbgetnonce", "copydbsaslstart", "copydb"]);
const ALWAYS_IGNORED = new Set(["configureFailPoint"]);

/** The URI with a client entity's uriOptions in its query string. */
function withOptions(uri, uriOptions = {}) {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(uriOptions)) {
    url.searchParams.set(key, typeof value === "object" ? JSON.stringify(value) : String(value));
  }
  return url.toString();
}

class Test {
  constructor(uri, internal) {
    this.uri = uri;
    this.internal = internal;
    this.entities = new Map();
    this.kinds = new Map();
    this.events = new Map(); // client id → [{ type, event }]
    this.clients = [];
    this.streams = [];
    this.failPoints = [];
  }

  entity(id) {
    if (!this.entities.has(id)) throw new Error(`runner: no entity ${id}`);
    return this.entities.get(id);
  }

  kindOf(id) {
    return this.kinds.get(id);
  }

  async create(createEntities) {
    for (const spec of createEntities ?? []) {
      const [kind, e] = Object.entries(spec)[0];
      if (kind === "client") {
        const client = new MongoClient(withOptions(this.uri, e.uriOptions), { monitorCommands: true, serverSelectionTimeoutMS: 10_000 });
        const observed = new Set(e.observeEvents ?? []);
        const ignored = new Set(e.ignoreCommandMonitoringEvents ?? []);
        const list = [];
        this.events.set(e.id, list);
        const keep = (event) => {
          const name = event.commandName;
          if (ALWAYS_IGNORED.has(name) || ignored.has(name)) return false;
          return e.observeSensitiveCommands || !SENSITIVE.has(String(name).toLowerCase());
        };
        for (const [driverName, type] of [["commandStarted", "commandStartedEvent"], ["commandSucceeded", "commandSucceededEvent"], ["commandFailed", "commandFailedEvent"]]) {
          if (observed.has(type)) client.on(driverName, (event) => keep(event) && list.push({ type, event }));
        }
        await client.connect();
        this.clients.push(client);
        this.add(e.id, "client", client);
      } else if (kind === "database") {
        this.add(e.id, "database", this.entity(e.client).db(e.databaseName, e.databaseOptions));
      } else if (kind === "collection") {
        this.add(e.id, "collection", this.entity(e.database).collection(e.collectionName, e.collectionOptions));
      } else if (kind === "session") {
        this.add(e.id, "session", this.entity(e.client).startSession(e.sessionOptions));
      } else {
        throw new UnsupportedOperation(`entity type ${kind}`);
      }
    }
  }

  add(id, kind, value) {
    this.entities.set(id, value);
    this.kinds.set(id, kind);
  }

  async testRunner(name, args) {
    if (name === "failPoint") {
      const client = this.entity(args.client);
      await client.db("admin").command(args.failPoint);
      this.failPoints.push([client, args.failPoint.configureFailPoint]);
      return undefined;
    }
    if (name === "assertCollectionExists" || name === "assertCollectionNotExists") {
      const names = (await this.internal.db(args.databaseName).listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      const exists = names.includes(args.collectionName);
      if (exists !== (name === "assertCollectionExists")) throw new MatchError(`${name}: ${args.databaseName}.${args.collectionName}`);
      return undefined;
    }
    throw new UnsupportedOperation(`testRunner.${name}`);
  }

  async close() {
    for (const stream of this.streams) await stream.close().catch(() => {});
    for (const [client, name] of this.failPoints) await client.db("admin").command({ configureFailPoint: name, mode: "off" }).catch(() => {});
    for (const client of this.clients) await client.close().catch(() => {});
  }
}

/** The error's fields the spec's expectError reads. */
function checkError(expected, error, test) {
  const server = error instanceof MongoServerError || error instanceof MongoBulkWriteError || (error instanceof MongoError && error.code !== undefined && !(error.name ?? "").startsWith("MongoClient") && error.name !== "MongoInvalidArgumentError" && error.name !== "MongoAPIError");
  if (expected.isClientError === true && server) throw new MatchError(`expected a client-side error, got a server error: ${error.message}`);
  if (expected.isClientError === false && !server) throw new MatchError(`expected a server error, got: ${error.message}`);
  if (expected.isTimeoutError) throw new MatchError("timeout errors are not checked by this runner");
  if (expected.errorContains && !String(error.message).toLowerCase().includes(expected.errorContains.toLowerCase())) {
    throw new MatchError(`error message ${JSON.stringify(error.message)} lacks ${JSON.stringify(expected.errorContains)}`);
  }
  if (expected.errorCode !== undefined && Number(error.code) !== numeric(expected.errorCode)) {
    throw new MatchError(`expected error code ${expected.errorCode}, got ${error.code} (${error.message})`);
  }
  if (expected.errorCodeName !== undefined && error.codeName !== expected.errorCodeName) {
    throw new MatchError(`expected error code name ${expected.errorCodeName}, got ${error.codeName} (${error.message})`);
  }
  for (const label of expected.errorLabelsContain ?? []) {
    if (!error.hasErrorLabel?.(label)) throw new MatchError(`error lacks label ${label} (labels: ${JSON.stringify(error.errorLabels ?? [])})`);
  }
  for (const label of expected.errorLabelsOmit ?? []) {
    if (error.hasErrorLabel?.(label)) throw new MatchError(`error has label ${label}`);
  }
  if (expected.errorResponse) match(expected.errorResponse, error.errorResponse ?? {}, { entities: test.entities });
  if (expected.expectResult) {
    const partial = error instanceof MongoBulkWriteError ? bulkResult(error.result) : error.result;
    match(expected.expectResult, partial, { entities: test.entities });
  }
}

/** A result for a message: JSON when it is data, its class name when it is a driver object. */
function describe(result) {
  try {
    return JSON.stringify(result);
  } catch {
    return `a ${result?.constructor?.name ?? typeof result}`;
  }
}

async function runOperation(operation, test) {
  let result;
  try {
    result = await run(operation, test);
  } catch (error) {
    if (error instanceof UnsupportedOperation) throw error;
    if (operation.ignoreResultAndError) return;
    if (!operation.expectError) throw error;
    checkError(operation.expectError, error, test);
    return;
  }
  if (operation.expectError) throw new MatchError(`${operation.name}: expected an error (${JSON.stringify(operation.expectError)}), got ${describe(result)}`);
  if (operation.saveResultAsEntity) test.add(operation.saveResultAsEntity, operation.name === "createChangeStream" ? "changeStream" : "result", result);
  if (operation.expectResult !== undefined && !operation.ignoreResultAndError) {
    try {
      match(operation.expectResult, result, { entities: test.entities });
    } catch (e) {
      if (e instanceof MatchError) e.message = `${operation.name} result: ${e.message}`;
      throw e;
    }
  }
}

function checkEvents(expectations, test) {
  for (const { client, events: expected, eventType = "command", ignoreExtraEvents = false } of expectations) {
    if (eventType !== "command") throw new UnsupportedOperation(`${eventType} events`);
    const actual = test.events.get(client) ?? [];
    if (ignoreExtraEvents ? actual.length < expected.length : actual.length !== expected.length) {
      const names = actual.map((a) => `${a.type.replace("Event", "")}:${a.event.commandName}`);
      throw new MatchError(`${client}: expected ${expected.length} events, got ${actual.length}: ${names.join(", ")}`);
    }
    expected.forEach((want, i) => {
      const [type, fields] = Object.entries(want)[0];
      const got = actual[i];
      const where = `${client} event ${i} (${type})`;
      if (got.type !== type) throw new MatchError(`${where}: got ${got.type} ${got.event.commandName}`);
      try {
        if (fields.commandName !== undefined && got.event.commandName !== fields.commandName) throw new MatchError(`commandName ${got.event.commandName}, expected ${fields.commandName}`);
        if (fields.databaseName !== undefined && got.event.databaseName !== fields.databaseName) throw new MatchError(`databaseName ${got.event.databaseName}, expected ${fields.databaseName}`);
        if (fields.command) match(fields.command, got.event.command, { entities: test.entities });
        if (fields.reply) match(fields.reply, got.event.reply, { entities: test.entities });
        if (fields.hasServerConnectionId !== undefined && (got.event.serverConnectionId != null) !== fields.hasServerConnectionId) {
          throw new MatchError(`hasServerConnectionId: expected ${fields.hasServerConnectionId}`);
        }
      } catch (e) {
        if (e instanceof MatchError) e.message = `${where}: ${e.message}`;
        throw e;
      }
    });
  }
}

async function checkOutcome(outcome, internal) {
  for (const { databaseName, collectionName, documents } of outcome ?? []) {
    const actual = await internal.db(databaseName).collection(collectionName).find({}, { sort: { _id: 1 }, readConcern: { level: "local" }, readPreference: "primary" }).toArray();
    try {
      match(documents, actual, { root: false });
    } catch (e) {
      if (e instanceof MatchError) e.message = `outcome ${databaseName}.${collectionName}: ${e.message}`;
      throw e;
    }
  }
}

async function loadInitialData(initialData, internal) {
  for (const { databaseName, collectionName, documents, createOptions } of initialData ?? []) {
    const db = internal.db(databaseName);
    await db.collection(collectionName).drop({ writeConcern: { w: "majority" } }).catch(() => {});
    if (createOptions || documents.length === 0) {
      await db.createCollection(collectionName, { ...createOptions, writeConcern: { w: "majority" } });
    }
    if (documents.length > 0) await db.collection(collectionName).insertMany(documents, { writeConcern: { w: "majority" } });
  }
}

/** Runs one test of a file (whose requirements were already checked). */
export async function runTest(file, spec, uri, internal) {
  const test = new Test(uri, internal);
  try {
    await loadInitialData(file.initialData, internal);
    await test.create(file.createEntities);
    for (const operation of spec.operations) await runOperation(operation, test);
    if (spec.expectEvents) checkEvents(spec.expectEvents, test);
    await checkOutcome(spec.outcome, internal);
    return { status: "passed" };
  } catch (error) {
    if (error instanceof UnsupportedOperation) return { status: "skipped", reason: `the runner does not implement ${error.message}` };
    return { status: "failed", reason: error instanceof MatchError ? error.message : `${error.name}: ${error.message}` };
  } finally {
    await test.close();
  }
}
