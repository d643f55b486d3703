// The package's entry object: sequences over one counters collection of the user's `Db`, and
// inserts that number documents (counter-based or the tutorial's optimistic loop).
import { core } from "./wasm.js";
import { Sequence } from "./sequence.js";
import { runPlan } from "./run-plan.js";
import { fromDriver, toInt64 } from "./bson.js";
import { isDuplicateKey, duplicateKeyFields } from "./execute.js";
import { checkKnownKeys, mongoSeqError } from "./errors.js";
import { waitForNumber } from "./wait-for-number.js";

const INSERT_OPTIONS = ["sequence", "field", "formatField"];

export class Sequences {
  #counters;
  #sequences = new Map();

  /**
   * @param {import("mongodb").Db} db  the database holding the counters collection
   * @param {{ collection?: string }} [options]  counters collection name (default "counters")
   */
  constructor(db, options) {
    const { collection = "counters" } = checkKnownKeys("Sequences options", options, ["collection"]);
    if (typeof db?.collection !== "function") {
      throw mongoSeqError("INVALID_ARGUMENT", "the first argument must be a mongodb Db", { argument: "db" });
    }
    if (typeof collection !== "string" || collection === "") {
      throw mongoSeqError("INVALID_OPTION", "option `collection` must be a non-empty string", { option: "collection" });
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
    // The core validates every option (unknown keys included) and the name.
    const spec = new core.SequenceSpec({ ...options, name });
    const existing = this.#sequences.get(name);
    if (existing !== undefined) {
      const wanted = spec.options();
      spec.free();
      if (options !== undefined && !sameOptions(existing.options, wanted)) {
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
    const { sequence, field, formatField } = this.#insertOptions(options);
    if (!Array.isArray(docs)) throw mongoSeqError("INVALID_ARGUMENT", "docs must be an array", { argument: "docs" });
    const scoped = sequence.options.scope.length > 0;
    // Counter ids first: a missing scope field fails before anything is reserved or written.
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
    const { sequence, field = "_id", formatField } = checkKnownKeys("insertOptimistic options", options, INSERT_OPTIONS);
    // Without a sequence: default options, named after the collection (not registered, so the
    // name stays free for `sequence()`).
    const spec =
      sequence === undefined
        ? new core.SequenceSpec({ name: collection.collectionName })
        : (sequence instanceof Sequence ? sequence : this.sequence(sequence)).spec;
    let plan;
    try {
      plan = spec.insertOptimistic(field, fromDriver(doc), formatField);
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
  waitForNumber(collection, id, options) {
    return waitForNumber(collection, id, checkKnownKeys("waitForNumber options", options, ["field", "timeoutMs", "pollMs"]));
  }

  #insertOptions(options) {
    const { sequence, field = "_id", formatField } = checkKnownKeys("insert options", options, INSERT_OPTIONS);
    if (sequence === undefined) {
      throw mongoSeqError("INVALID_OPTION", "option `sequence` (a name or a Sequence) is required", { option: "sequence" });
    }
    const resolved = sequence instanceof Sequence ? sequence : this.sequence(sequence);
    if (formatField !== undefined && resolved.options.format === null) {
      throw mongoSeqError("INVALID_OPTION", `sequence \`${resolved.name}\` has no format for formatField`, { option: "formatField" });
    }
    return { sequence: resolved, field, formatField };
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
