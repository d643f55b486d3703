// The package's entry object: sequences over one counters collection of the user's `Db`, and
// inserts that number documents (counter-based or the tutorial's optimistic loop).
import { core } from "./wasm.js";
import { Sequence } from "./sequence.js";
import { runPlan } from "./run-plan.js";
import { checkStorable, documentArgument, toCoreInteger, toInt64 } from "./bson.js";
import { isDuplicateKey, duplicateKeyFields } from "./execute.js";
import { checkCollection, checkKnownKeys, describe, invalidArgument, invalidOption, isDocument, mongoSeqError } from "./errors.js";
import { waitForNumber } from "./wait-for-number.js";

const INSERT_OPTIONS = ["sequence", "field", "formatField"];
const OPTIMISTIC_OPTIONS = [...INSERT_OPTIONS, "maxAttempts"];

export class Sequences {
  #counters;
  #sequences = new Map();

  /**
   * @param {import("mongodb").Db} db  the database holding the counters collection
   * @param {{ collection?: string }} [options]  counters collection name (default "counters")
   */
  constructor(db, options) {
    if (typeof db?.collection !== "function") throw invalidArgument("db", `must be a mongodb Db, got ${describe(db)}`);
    const { collection = "counters" } = checkKnownKeys("Sequences options", options, ["collection"]);
    if (typeof collection !== "string" || collection === "") {
      throw invalidOption("collection", `must be a non-empty string, got ${describe(collection)}`);
    }
    this.#counters = db.collection(collection);
  }

  /** The counters collection. */
  get counters() {
    return this.#counters;
  }

  /**
   * The sequence `name` (options: start, step, min, max, block, scope, format). The same name
   * returns the same object, which shares its block between callers; asking again with other
   * options is a SEQUENCE_CONFLICT.
   */
  sequence(name, options) {
    // The core validates every option (unknown keys included), the name, and options that are
    // not an object at all.
    const spec = new core.SequenceSpec(isDocument(options) ? namedOptions(name, options) : (options ?? { name }));
    const existing = this.#sequences.get(name);
    if (existing !== undefined) {
      const wanted = spec.options();
      spec.free();
      if (options !== undefined && options !== null && !sameOptions(existing.options, wanted)) {
        throw mongoSeqError("SEQUENCE_CONFLICT", `sequence \`${name}\` was already defined with other options`, { name });
      }
      return existing;
    }
    const sequence = new Sequence(spec, this.#counters);
    this.#sequences.set(name, sequence);
    return sequence;
  }

  /**
   * Inserts a copy of `doc` with the next number in `field` (and the formatted id in
   * `formatField`). A duplicate key on `field` takes a fresh number and retries.
   */
  async insertOne(collection, doc, options) {
    checkCollection(collection, ["insertOne"]);
    checkStorable("doc", doc);
    const { sequence, field, formatField } = this.#insertOptions(options);
    const scope = sequence.options.scope.length > 0 ? doc : undefined;
    for (let attempt = 1; ; attempt++) {
      const value = await sequence.next(scope);
      const numbered = numberedDocument(sequence, doc, value, field, formatField);
      try {
        const result = await collection.insertOne(numbered);
        const formatted = formatField === undefined ? undefined : numbered[formatField];
        return { insertedId: field === "_id" ? value : result.insertedId, value, formatted };
      } catch (error) {
        if (!retryable(error, field, attempt)) throw error;
      }
    }
  }

  /**
   * Inserts copies of `docs`, numbered in order, with one reservation per counter (one round
   * trip for an unscoped sequence). Documents that hit a duplicate key on `field` are numbered
   * again and retried; the ones before them are kept.
   */
  async insertMany(collection, docs, options) {
    checkCollection(collection, ["insertMany"]);
    if (!Array.isArray(docs)) throw invalidArgument("docs", `must be an array of documents, got ${describe(docs)}`);
    // Every check before anything is reserved or written: the size of the batch, each
    // document, the options, and each document's counter id (a missing scope field).
    core.checkCount("docs.length", docs.length);
    docs.forEach((doc, index) => checkStorable(`docs[${index}]`, doc));
    const { sequence, field, formatField } = this.#insertOptions(options);
    const scoped = sequence.options.scope.length > 0;
    const counterIds = docs.map((doc) => sequence.counterId(scoped ? doc : undefined));
    const values = new Array(docs.length);
    const insertedIds = {};
    let pending = docs.map((_, index) => index);
    for (let attempt = 1; pending.length > 0; attempt++) {
      await this.#assign(sequence, docs, counterIds, pending, values);
      const numbered = pending.map((index) => numberedDocument(sequence, docs[index], values[index], field, formatField));
      try {
        const result = await collection.insertMany(numbered, { ordered: true });
        pending.forEach((index, i) => (insertedIds[index] = field === "_id" ? values[index] : result.insertedIds[i]));
        pending = [];
      } catch (error) {
        if (!retryable(error, field, attempt)) throw error;
        const failedAt = error.writeErrors?.[0]?.index ?? 0;
        pending.slice(0, failedAt).forEach((index, i) => (insertedIds[index] = field === "_id" ? values[index] : numbered[i]._id));
        pending = pending.slice(failedAt);
      }
    }
    const formatted = formatField === undefined ? undefined : values.map((value) => sequence.format(value));
    return { insertedCount: docs.length, insertedIds, values, formatted };
  }

  /**
   * The tutorial's optimistic loop, without a counter: find the largest number in `field`,
   * insert with the next one, retry on a duplicate key. `sequence` (name or options) supplies
   * start/step/bounds/scope; by default a sequence named after the collection, starting at 1.
   */
  async insertOptimistic(collection, doc, options) {
    checkCollection(collection, ["findOne", "insertOne"]);
    checkStorable("doc", doc);
    const { sequence, field = "_id", formatField, maxAttempts } = checkKnownKeys("insertOptimistic options", options, OPTIMISTIC_OPTIONS);
    // Without a sequence: default options, named after the collection (not registered, so the
    // name stays free for `sequence()`).
    const spec = sequence === undefined ? new core.SequenceSpec({ name: collection.collectionName }) : this.#resolve(sequence).spec;
    let plan;
    try {
      plan = spec.insertOptimistic(field, documentArgument("doc", doc), formatField, maxAttempts);
    } finally {
      if (sequence === undefined) spec.free();
    }
    const target = { counters: this.#counters, documents: collection, document: doc };
    const outcome = await runPlan(plan, target);
    return { insertedId: field === "_id" ? outcome.value : target.insertedId, value: outcome.value, formatted: outcome.formatted ?? undefined };
  }

  /**
   * Reads back the number another process (the mongo-seq sidecar) assigns to the document
   * `_id` in `field`: resolves with it, or rejects with WAIT_TIMEOUT after `timeoutMs`.
   */
  async waitForNumber(collection, id, options) {
    checkCollection(collection, ["findOne"]);
    return waitForNumber(collection, id, checkKnownKeys("waitForNumber options", options, ["field", "timeoutMs", "pollMs"]));
  }

  /** The insert options, checked (the core checks where the number and formatted id go). */
  #insertOptions(options) {
    const { sequence, field = "_id", formatField } = checkKnownKeys("insert options", options, INSERT_OPTIONS);
    if (sequence === undefined) throw invalidOption("sequence", "is required (a sequence name or a Sequence)");
    const resolved = this.#resolve(sequence);
    resolved.spec.checkInsertFields(field, formatField);
    return { sequence: resolved, field, formatField };
  }

  /** The `sequence` option: a Sequence, or the name of one (defined or with default options). */
  #resolve(sequence) {
    if (sequence instanceof Sequence) return sequence;
    if (typeof sequence !== "string") {
      throw invalidOption("sequence", `must be a sequence name or a Sequence of this package, got ${describe(sequence)}`);
    }
    return this.sequence(sequence);
  }

  /** Reserves numbers for the documents at `pending`, one nextMany per counter id. */
  async #assign(sequence, docs, counterIds, pending, values) {
    const groups = new Map();
    for (const index of pending) {
      const group = groups.get(counterIds[index]) ?? [];
      group.push(index);
      groups.set(counterIds[index], group);
    }
    const scoped = sequence.options.scope.length > 0;
    for (const group of groups.values()) {
      const numbers = await sequence.nextMany(group.length, scoped ? docs[group[0]] : undefined);
      group.forEach((index, i) => (values[index] = numbers[i]));
    }
  }
}

/** The options of `sequence(name, options)` as the core reads them: the name in, Longs as BigInt. */
function namedOptions(name, options) {
  if (options.name !== undefined && options.name !== name) {
    throw invalidOption("name", `is the first argument of sequence() (${describe(name)}); the options say ${describe(options.name)}`);
  }
  const named = { name };
  for (const [key, value] of Object.entries(options)) if (key !== "name") named[key] = toCoreInteger(value);
  return named;
}

function sameOptions(a, b) {
  return JSON.stringify(a, bigintAsText) === JSON.stringify(b, bigintAsText);
}

function bigintAsText(_, value) {
  return typeof value === "bigint" ? `${value}n` : value;
}

/** A copy of `doc` with the number (as int64) and, if asked, its formatted id. */
function numberedDocument(sequence, doc, value, field, formatField) {
  const numbered = { ...doc, [field]: toInt64(value) };
  if (formatField !== undefined) numbered[formatField] = sequence.format(value);
  return numbered;
}

/** A duplicate key on the sequence field is a lost race (retry); on another key it is the caller's. */
function retryable(error, field, attempt) {
  if (!isDuplicateKey(error)) return false;
  const fields = duplicateKeyFields(error);
  if (fields !== undefined && !fields.includes(field)) return false;
  if (attempt >= core.maxRetries()) {
    throw mongoSeqError("TOO_MANY_RETRIES", `insert gave up after ${attempt} attempts: field \`${field}\` kept colliding`, {
      operation: "insert",
      attempts: attempt,
    });
  }
  return true;
}
