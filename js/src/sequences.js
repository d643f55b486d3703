// The package's entry object: sequences over one counters collection of the user's `Db`, and
// inserts that number documents (counter-based or the tutorial's optimistic loop).
import { core } from "./wasm.js";
import { Sequence } from "./sequence.js";
import { runPlan } from "./run-plan.js";
import { bsonCodec, toCoreInteger } from "./bson.js";
import { checkCollection, checkKnownKeys, describe, invalidArgument, invalidOption, isDocument, mongoSeqError } from "./errors.js";
import { waitForNumber } from "./wait-for-number.js";
import { executeCommand } from "./execute.js";

const INSERT_OPTIONS = ["sequence", "field", "formatField"];
const DATED_INSERT_OPTIONS = [...INSERT_OPTIONS, "dateField"];
const OPTIMISTIC_OPTIONS = [...INSERT_OPTIONS, "maxAttempts"];
const ASSIGN_OPTIONS = [...DATED_INSERT_OPTIONS, "sort"];
/** A command run alone (an index), outside a plan: a duplicate key is the caller's error. */
const NO_PLAN = { handlesDuplicateKey: () => false };

export class Sequences {
  #counters;
  #ledger;
  #codec;
  #sequences = new Map();

  /**
   * @param {import("mongodb").Db} db  the database holding the counters collection
   * @param {{ collection?: string, ledger?: string, bson?: object }} [options]  counters collection
   *   name (default "counters"); the ledger's, beside it (voided numbers, deleted documents'
   *   numbers; default "mongo_seq_ledger"); the BSON library of the driver that made `db` when it is not the `mongodb`
   *   package this one resolves (mongoose's own driver: `mongoose.mongo.BSON`)
   */
  constructor(db, options) {
    if (typeof db?.collection !== "function") throw invalidArgument("db", `must be a mongodb Db, got ${describe(db)}`);
    const { collection = "counters", ledger = "mongo_seq_ledger", bson } = checkKnownKeys("Sequences options", options, ["collection", "ledger", "bson"]);
    const database = typeof db.databaseName === "string" ? db.databaseName : undefined;
    for (const [option, name] of [["collection", collection], ["ledger", ledger]]) {
      if (typeof name !== "string") throw invalidOption(option, `must be a collection name (a string), got ${describe(name)}`);
      // The server's rules (`$`, NUL, `system.*`, the namespace's length), checked by the core
      // before any command.
      core.checkCollectionName(option, name, database);
    }
    this.#codec = bsonCodec(bson);
    this.#counters = db.collection(collection);
    this.#ledger = db.collection(ledger);
  }

  /** The counters collection. */
  get counters() {
    return this.#counters;
  }

  /** The ledger collection (voided numbers, deleted documents' numbers). */
  get ledger() {
    return this.#ledger;
  }

  /**
   * The sequence `name` (options: start, step, min, max, block, scope, format). The same name
   * returns the same object, which shares its block between callers; asking again with other
   * options is a SEQUENCE_CONFLICT.
   */
  sequence(name, options) {
    // The core validates every option (unknown keys included), the name, and options that are
    // not an object at all.
    const input = isDocument(options) ? namedOptions(name, options, this.#codec) : (options ?? { name });
    const spec = new core.SequenceSpec(input);
    const existing = this.#sequences.get(name);
    if (existing !== undefined) {
      const wanted = spec.options();
      spec.free();
      if (options !== undefined && options !== null && !sameOptions(existing.options, wanted)) {
        throw mongoSeqError("SEQUENCE_CONFLICT", `sequence \`${name}\` was already defined with other options`, { name });
      }
      return existing;
    }
    let sequence;
    try {
      // A sequence that resets checks its time zone exists (Intl) before any command.
      sequence = new Sequence(spec, input, this.#counters, this.#codec, this.#ledger);
    } catch (error) {
      spec.free();
      throw error;
    }
    this.#sequences.set(name, sequence);
    return sequence;
  }

  /**
   * Inserts a copy of `doc` with the next number in `field` (and the formatted id in
   * `formatField`). A duplicate key on `field` takes a fresh number and inserts again (the
   * core's insert plan). A sequence that resets numbers the document in the period of its
   * `dateField` (a Date), else of now, and writes the period in `<field>Period`.
   */
  async insertOne(collection, doc, options) {
    checkCollection(collection, ["insertOne"]);
    this.#codec.checkStorable("doc", doc);
    const { sequence, field, formatField, dateField } = this.#insertOptions(options);
    const needsDocument = sequence.options.scope.length > 0 || dateField !== undefined;
    const document = needsDocument ? this.#codec.documentArgument("doc", doc) : undefined;
    const runner = { counters: this.#counters, documents: collection, document: doc, sequence, codec: this.#codec };
    const plan = sequence.spec.insertOne(field, formatField, document, dateField, Date.now());
    const { values, formatted, periods } = await runPlan(plan, runner);
    return { insertedId: field === "_id" ? values[0] : runner.insertedId, value: values[0], formatted: formatted?.[0], ...(periods && { period: periods[0] }) };
  }

  /**
   * Inserts copies of `docs`, numbered in order, with one reservation per counter (one round
   * trip for an unscoped sequence). Documents that hit a duplicate key on `field` are numbered
   * again and inserted again; the ones before them are kept (the core's insert plan).
   */
  async insertMany(collection, docs, options) {
    checkCollection(collection, ["insertMany"]);
    if (!Array.isArray(docs)) throw invalidArgument("docs", `must be an array of documents, got ${describe(docs)}`);
    // Every check before anything is reserved or written: the size of the batch, each
    // document, the options; the plan checks each document's counter id (a missing scope field).
    core.checkCount("docs.length", docs.length);
    docs.forEach((doc, index) => this.#codec.checkStorable(`docs[${index}]`, doc));
    const { sequence, field, formatField, dateField } = this.#insertOptions(options);
    const needsDocuments = sequence.options.scope.length > 0 || dateField !== undefined;
    const documents = needsDocuments ? docs.map((doc, index) => this.#codec.documentArgument(`docs[${index}]`, doc)) : undefined;
    const plan = sequence.spec.insertMany(field, formatField, docs.length, documents, dateField, Date.now());
    const runner = { counters: this.#counters, documents: collection, batch: docs, insertedIds: {}, sequence, codec: this.#codec };
    const { values, formatted, periods } = await runPlan(plan, runner);
    const insertedIds = {};
    values.forEach((value, index) => (insertedIds[index] = field === "_id" ? value : runner.insertedIds[index]));
    return { insertedCount: docs.length, insertedIds, values, formatted: formatted ?? undefined, ...(periods && { periods }) };
  }

  /**
   * Numbers every document of `collection` that matches `filter` and has no number in `field`
   * (its formatted id in `formatField`, its period in `<field>Period` when the sequence
   * resets), in `sort` order then `_id`, each in the period of its `dateField` (else now): one
   * reservation per counter per page of 1,000, every write conditioned on the document still
   * matching and unnumbered (the core's assign plan). Creates the unique index the plan relies
   * on first (`numberingIndex`, once per collection and field in this process). Resolves
   * `{ assigned: [{ _id, value, formatted?, period? }], skipped: [{ _id, code, message }] }`.
   */
  async assign(collection, filter, options) {
    checkCollection(collection, ["find", "bulkWrite", "createIndex"]);
    // `field` may be a nested path here (the core's assign checks it).
    const { sequence, field, formatField, dateField, sort } = this.#insertOptions(options, "assign options", ASSIGN_OPTIONS, false);
    const filterDocument = this.#codec.documentArgument("filter", filter);
    const sortDocument = sort === undefined ? undefined : this.#codec.documentArgument("sort", sort);
    const plan = sequence.admin.assign(field, formatField, filterDocument, sortDocument, dateField, Date.now());
    try {
      await this.#ensureNumberingIndex(collection, sequence, field, formatField);
    } catch (error) {
      plan.free();
      throw error;
    }
    const outcome = await runPlan(plan, { counters: this.#counters, documents: collection, sequence, codec: this.#codec });
    for (const entry of [...outcome.assigned, ...outcome.skipped]) entry._id = this.#codec.toDriver(entry._id);
    return outcome;
  }

  /**
   * Creates the unique index numbering into `field` relies on (`{ <scope…>, <field>Period
   * (a sequence that resets), <field> }`, only where `field` exists): a number another document
   * of the same counter holds is then refused and taken again, by `assign` and by inserts.
   * Resolves with the index's keys and name.
   */
  async createNumberingIndex(collection, options) {
    checkCollection(collection, ["createIndex"]);
    const { sequence, field, formatField } = this.#insertOptions(options, "createNumberingIndex options", INSERT_OPTIONS);
    return this.#ensureNumberingIndex(collection, sequence, field, formatField, true);
  }

  async #ensureNumberingIndex(collection, sequence, field, formatField, always = false) {
    const command = sequence.spec.numberingIndex(field, formatField);
    let made = indexesMade.get(collection);
    if (made === undefined) indexesMade.set(collection, (made = new Set()));
    const key = `${command.name} ${JSON.stringify(command.keys)}`;
    if (always || !made.has(key)) {
      await executeCommand(JSON.stringify(command), { counters: this.#counters, documents: collection, codec: this.#codec }, NO_PLAN);
      made.add(key);
    }
    return { name: command.name, keys: command.keys };
  }

  /**
   * The tutorial's optimistic loop, without a counter: find the largest number in `field`,
   * insert with the next one, retry on a duplicate key. `sequence` (name or options) supplies
   * start/step/bounds/scope; by default a sequence named after the collection, starting at 1.
   */
  async insertOptimistic(collection, doc, options) {
    checkCollection(collection, ["findOne", "insertOne"]);
    this.#codec.checkStorable("doc", doc);
    const { sequence, field = "_id", formatField, maxAttempts } = checkKnownKeys("insertOptimistic options", options, OPTIMISTIC_OPTIONS);
    // Without a sequence: default options, named after the collection (not registered, so the
    // name stays free for `sequence()`).
    const spec = sequence === undefined ? new core.SequenceSpec({ name: collection.collectionName }) : this.#resolve(sequence).spec;
    let plan;
    try {
      plan = spec.insertOptimistic(field, this.#codec.documentArgument("doc", doc), formatField, maxAttempts);
    } finally {
      if (sequence === undefined) spec.free();
    }
    const runner = { counters: this.#counters, documents: collection, document: doc, codec: this.#codec };
    const outcome = await runPlan(plan, runner);
    return { insertedId: field === "_id" ? outcome.value : runner.insertedId, value: outcome.value, formatted: outcome.formatted ?? undefined };
  }

  /**
   * Reads back the number another process (the mongo-seq sidecar) assigns to the document
   * `_id` in `field`: resolves with it, or rejects with WAIT_TIMEOUT after `timeoutMs`.
   */
  async waitForNumber(collection, id, options) {
    checkCollection(collection, ["findOne"]);
    return waitForNumber(collection, id, checkKnownKeys("waitForNumber options", options, ["field", "timeoutMs", "pollMs"]), this.#codec);
  }

  /** The insert options, checked (the core checks where the number and formatted id go, and the `dateField`). */
  #insertOptions(options, what = "insert options", known = DATED_INSERT_OPTIONS, topLevel = true) {
    const { sequence, field = "_id", formatField, dateField, sort } = checkKnownKeys(what, options, known);
    if (sequence === undefined) throw invalidOption("sequence", "is required (a sequence name or a Sequence)");
    const resolved = this.#resolve(sequence);
    resolved.spec.checkInsertFields(field, formatField, !topLevel);
    return { sequence: resolved, field, formatField, dateField, sort };
  }

  /** The `sequence` option: a Sequence, or the name of one (defined or with default options). */
  #resolve(sequence) {
    if (sequence instanceof Sequence) return sequence;
    if (typeof sequence !== "string") {
      throw invalidOption("sequence", `must be a sequence name or a Sequence of this package, got ${describe(sequence)}`);
    }
    return this.sequence(sequence);
  }
}

/**
 * The options of `sequence(name, options)` as the core reads them: the name in, Longs as
 * BigInt, a `counterId` document as canonical Extended JSON (its values may be any BSON value).
 */
function namedOptions(name, options, codec) {
  if (options.name !== undefined && options.name !== name) {
    throw invalidOption("name", `is the first argument of sequence() (${describe(name)}); the options say ${describe(options.name)}`);
  }
  const named = { name };
  for (const [key, value] of Object.entries(options)) {
    if (key === "counterId" && isDocument(value)) named[key] = codec.documentArgument("counterId", value);
    else if (key !== "name") named[key] = toCoreInteger(value);
  }
  return named;
}

/** Numbering indexes this process created, by collection object. */
const indexesMade = new WeakMap();

function sameOptions(a, b) {
  return JSON.stringify(a, bigintAsText) === JSON.stringify(b, bigintAsText);
}

function bigintAsText(_, value) {
  return typeof value === "bigint" ? `${value}n` : value;
}
