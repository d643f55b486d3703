// mongo-seq/mongoose: a mongoose plugin that numbers new documents from mongo-seq counters.
// Ergonomics over `Sequences` only: the sequence options, the numbers, the errors and the
// counter documents are the package's. The plugin decides which documents need a number
// (new, the field unset; with `when`, only those that match) and asks the package for them:
// `next()` per saved document (callers in one turn share one reservation), `nextMany()` once per
// counter for a whole `insertMany()` or `bulkWrite()`, and the package's `assign` for a stored
// document saved once it matches `when` (a write conditioned on it still matching and
// unnumbered: two processes saving it cannot give it two numbers). It imports nothing from
// mongoose: the schema, models and connections it is handed are enough, so it follows whichever
// mongoose (8 or 9) the application uses.
import { Sequences, core } from "./index.js";
import { checkBoolean, checkKnownKeys, describe, invalidArgument, invalidOption, isDocument, mongoSeqError } from "./errors.js";
import { zoneFormatter } from "./local-dates.js";

/** The plugin's own options; the rest are the sequence's (the core's keys but `name`, which is `sequence`). */
const PLUGIN_KEYS = ["field", "sequence", "formatField", "counters", "when", "dateField", "seedFromMax"];
/** The sequence's option keys (the core's but `name`), asked on first use: importing the plugin loads no Wasm. */
let sequenceKeys;
const sequenceOptionKeys = () => (sequenceKeys ??= core.optionKeys().filter((key) => key !== "name"));
/** The statics every numbered schema gets. */
const STATICS = ["sequence", "setNext", "current", "seedFromMax", "rewindAll", "rewindSequence", "assignNumbers", "adoptDefinition", "voidNumber"];
/** The document methods every numbered schema gets. */
const METHODS = ["setNext"];

/**
 * Numbers new documents of `schema` in `options.field`. Several calls number several fields.
 * Bad options throw a MongoSeqError here, when the schema is defined, before any I/O.
 */
export function sequencePlugin(schema, options) {
  if (typeof schema?.pre !== "function" || typeof schema?.static !== "function" || typeof schema?.path !== "function") {
    throw invalidArgument("schema", `must be a mongoose Schema, got ${describe(schema)}`);
  }
  const numbered = checkPluginOptions(options);
  let fields = registries.get(schema);
  if (fields === undefined) {
    for (const name of STATICS) {
      if (schema.statics?.[name] !== undefined) throw invalidArgument("schema", `already has a static \`${name}\` (the plugin adds ${STATICS.join(", ")})`);
    }
    for (const name of METHODS) {
      if (schema.methods?.[name] !== undefined) throw invalidArgument("schema", `already has a method \`${name}\` (the plugin adds ${METHODS.join(", ")})`);
    }
    fields = new Map();
    registries.set(schema, fields);
    install(schema, fields);
    installMethods(schema, fields);
  }
  for (const other of fields.values()) {
    for (const path of [numbered.field, numbered.formatField]) {
      if (path !== undefined && (path === other.field || path === other.formatField)) {
        throw invalidOption(path === numbered.field ? "field" : "formatField", `\`${path}\` is already written by mongo-seq on this schema`);
      }
    }
  }
  addPaths(schema, numbered);
  fields.set(numbered.field, numbered);
}

/**
 * Field types the plugin writes a number to, with the integers each holds exactly: a number
 * past them would fail mongoose's cast or lose digits after it was reserved, so the sequence
 * gets that bound (a reservation past it is refused before anything is taken). `BigInt` is
 * stored as a 64-bit integer (the whole range); `Mixed` stores what it is given (a BigInt as
 * a 64-bit integer too).
 */
const NUMBER_TYPES = {
  Number: { min: -(2 ** 53 - 1), max: 2 ** 53 - 1, name: "Number (JavaScript numbers are exact up to 2^53 − 1)" },
  Double: { min: -(2 ** 53 - 1), max: 2 ** 53 - 1, name: "Double (exact up to 2^53 − 1)" },
  Int32: { min: -(2 ** 31), max: 2 ** 31 - 1, name: "Int32 (up to 2^31 − 1)" },
  BigInt: undefined,
  Mixed: undefined,
};
/** What mongoose calls a path that holds documents or values rather than one number. */
const CONTAINERS = { Embedded: "a sub-document", Array: "an array", DocumentArray: "an array of sub-documents", Map: "a Map" };

/** Numbered fields by schema (a schema may number several). */
const registries = new WeakMap();

/** The plugin options, checked; the sequence options through the core (with a stand-in name when none is given). */
function checkPluginOptions(options) {
  if (!isDocument(options)) throw invalidOption("options", `must be an object { field, sequence, … }, got ${describe(options)}`);
  const { field, sequence, formatField, counters = "counters", when, dateField, seedFromMax = false, ...rest } = checkKnownKeys("sequencePlugin options", options, [...PLUGIN_KEYS, ...sequenceOptionKeys()]);
  if (typeof seedFromMax !== "boolean") throw invalidOption("seedFromMax", `must be a boolean, got ${describe(seedFromMax)}`);
  if (typeof field !== "string") throw invalidOption("field", `is required: the path that receives the number, got ${describe(field)}`);
  if (sequence !== undefined && typeof sequence !== "string" && typeof sequence !== "function") {
    throw invalidOption("sequence", `must be a sequence name, or a function (modelName, model) returning one, got ${describe(sequence)}`);
  }
  if (typeof counters !== "string") throw invalidOption("counters", `must be a collection name, got ${describe(counters)}`);
  core.checkCollectionName("counters", counters);
  const hasFormat = rest.format !== undefined && rest.format !== null;
  if (hasFormat && formatField === undefined) {
    throw invalidOption("formatField", "is required with `format`: the path that receives the formatted id");
  }
  // Checked here, where the sequence may have no name yet (the core would name a stand-in).
  if (!hasFormat && formatField !== undefined) {
    throw invalidOption("format", 'is required with `formatField`: the pattern of the formatted id, e.g. "ORD-{seq:06}"');
  }
  const input = { ...rest, name: typeof sequence === "string" ? sequence : "mongoose" };
  const spec = new core.SequenceSpec(input);
  let normalized;
  let periodField;
  try {
    spec.checkInsertFields(field, formatField, true);
    normalized = spec.options();
    if (normalized.timeZone !== undefined) {
      // A sequence that resets writes each number's period beside it, as the package's inserts
      // and assign do: the core's numbering index names that field (before the number).
      periodField = Object.keys(spec.numberingIndex(field, formatField).keys).at(-2);
      // The zone must exist (Intl) before any document is saved.
      zoneFormatter(normalized.timeZone);
    }
    // `dateField` checked by the core as assign takes it (a sequence that resets, not a numbered path).
    // (the cold module's: loaded here only for these two options)
    if (dateField !== undefined) withAdmin(input, (admin) => admin.assign(field, formatField, {}, undefined, dateField, 0).free());
    // The core refuses a seed from a collection for a sequence that resets (the largest number
    // belongs to no period): asked here, before any document is saved (a scoped sequence's
    // plan needs scope values, which only documents have: that refusal is not this one).
    if (seedFromMax) {
      try {
        withAdmin(input, (admin) => admin.seedFromCollection(field, undefined).free());
      } catch (error) {
        if (error?.code !== "MISSING_SCOPE_FIELD") throw invalidOption("seedFromMax", error.message);
      }
    }
  } finally {
    spec.free();
  }
  return { field, formatField, periodField, dateField, when: checkWhen(when), seedFromMax, sequence, counters, sequenceOptions: rest, scope: rest.scope ?? [], options: normalized, bound: undefined };
}

/** `use(admin)` with the cold module's `SequenceAdmin` of `input`, freed after. */
function withAdmin(input, use) {
  const admin = new core.SequenceAdmin(input);
  try {
    return use(admin);
  } finally {
    admin.free();
  }
}

/**
 * The `when` option: a document of field equalities (`{ status: "issued" }`: strings, numbers,
 * booleans, null), sent as the filter of the conditioned write, or a function of the document
 * (then only the document's number is conditioned on the server). Operators and nested documents
 * are refused: the plugin also checks the equalities on the document in hand, which an operator
 * would make a second query language.
 */
function checkWhen(when) {
  if (when === undefined) return undefined;
  if (typeof when === "function") return { test: when, filter: {} };
  if (!isDocument(when) || Object.keys(when).length === 0) {
    throw invalidOption("when", `must be a document of field equalities (e.g. { status: "issued" }) or a function of the document, got ${describe(when)}`);
  }
  for (const [path, value] of Object.entries(when)) {
    if (path.startsWith("$") || !["string", "number", "boolean"].includes(typeof value) && value !== null) {
      throw invalidOption("when", `\`${path}\`: only equalities to a string, number, boolean or null are supported, got ${describe(value)}; for anything else pass a function of the document`);
    }
  }
  const entries = Object.entries(when);
  return { test: (doc) => entries.every(([path, value]) => (valueOf(doc, path) ?? null) === value), filter: when };
}

/**
 * Checks the numbered paths against the schema, and declares those it lacks (a Number, a
 * String for the formatted id; mongoose-sequence and @typegoose/auto-increment refuse a missing
 * path, mongo-seq adds it). A path declared with a type that cannot hold the number (a String,
 * a Date, …), or inside an array, is refused; a Number field bounds the sequence (NUMBER_TYPES).
 */
function addPaths(schema, numbered) {
  const { field, formatField } = numbered;
  const numberPath = checkPath(schema, "field", field);
  if (numberPath === undefined) schema.add({ [field]: Number });
  else if (field === "_id" && numberPath.instance === "ObjectId") {
    throw invalidOption("field", "`_id` of this schema is an ObjectId: declare `_id: Number` in the schema to number `_id`");
  } else if (!(numberPath.instance in NUMBER_TYPES)) {
    throw invalidOption(
      "field",
      `\`${field}\` is declared ${typeName(numberPath)} in the schema, which cannot hold the number: declare it Number (or Schema.Types.BigInt for numbers past 2^53), or put the formatted id in a String field with \`format\` and \`formatField\``,
    );
  }
  numbered.bound = typeBound(numbered, numberPath?.instance ?? "Number");
  if (numbered.periodField !== undefined) {
    const periodPath = checkPath(schema, "field", numbered.periodField);
    if (periodPath === undefined) schema.add({ [numbered.periodField]: String });
    else if (periodPath.instance !== "String" && periodPath.instance !== "Mixed") {
      throw invalidOption("field", `\`${numbered.periodField}\` (where each number's period goes) is declared ${typeName(periodPath)} in the schema: declare it String`);
    }
  }
  if (formatField !== undefined) {
    const formatPath = checkPath(schema, "formatField", formatField);
    if (formatPath === undefined) schema.add({ [formatField]: String });
    else if (formatPath.instance !== "String" && formatPath.instance !== "Mixed") {
      throw invalidOption("formatField", `\`${formatField}\` is declared ${typeName(formatPath)} in the schema: the formatted id is a string, declare it String`);
    }
  }
}

/**
 * The schema type at `path` (undefined when the schema lacks it), once every parent of a
 * dotted path is a nested object, a single sub-document or Mixed: never inside an array (one
 * path, many values) nor below a plain value.
 */
function checkPath(schema, option, path) {
  const keys = path.split(".");
  for (let i = 1; i < keys.length; i++) {
    const parent = keys.slice(0, i).join(".");
    const type = schema.path(parent);
    if (type === undefined || type.instance === "Embedded" || type.instance === "Mixed") continue;
    const what = type.instance === "Array" || type.$isMongooseDocumentArray ? "an array: one path, many values (apply the plugin to the array's sub-document schema instead)" : `declared ${typeName(type)}`;
    throw invalidOption(option, `\`${path}\` lies inside \`${parent}\`, which is ${what}`);
  }
  const type = schema.path(path);
  if (type === undefined && schema.pathType(path) === "nested") {
    throw invalidOption(option, `\`${path}\` is a nested object in the schema, not a field: name the field inside it (\`${path}.<field>\`)`);
  }
  if (type !== undefined && type.instance in CONTAINERS) {
    throw invalidOption(option, `\`${path}\` is ${CONTAINERS[type.instance]} in the schema, not a field that holds a number`);
  }
  return type;
}

/** "as a String", "as an ObjectId": a schema type's name for messages. */
function typeName(type) {
  return /^[AEIOU]/.test(type.instance) ? `as an ${type.instance}` : `as a ${type.instance}`;
}

/**
 * The bound a field type puts on the sequence: the sequence's options are given `max` (`min`
 * counting down) when they set none; one past the type is refused here. Returns the bound the
 * plugin set, or undefined.
 */
function typeBound(numbered, instance) {
  const limits = NUMBER_TYPES[instance];
  if (limits === undefined) return undefined;
  const { options, sequenceOptions, field } = numbered;
  const up = BigInt(options.step) > 0n;
  const key = up ? "max" : "min";
  const limit = up ? limits.max : limits.min;
  const beyond = (value) => (up ? BigInt(value) > BigInt(limit) : BigInt(value) < BigInt(limit));
  const fix = `the \`${field}\` field is declared ${limits.name}: declare it Schema.Types.BigInt to number past that (stored as a 64-bit integer), or bound the sequence`;
  if (beyond(options.start)) throw invalidOption("start", `${options.start} is past what ${fix}`);
  if (options[key] !== null && options[key] !== undefined) {
    if (beyond(options[key])) throw invalidOption(key, `${options[key]} is past what ${fix}`);
    return undefined;
  }
  sequenceOptions[key] = limit;
  return { key, limit, fix };
}

function install(schema, fields) {
  // `validate` runs before mongoose checks `required` paths; `save` covers validateBeforeSave: false.
  const numberDocument = async function () {
    if (!this.isNew) return;
    // A sub-document (the schema embedded in another) is numbered when its owner is saved or
    // inserted, on the owner's model: its sequence is `<collection>.<path>.<field>` by default.
    const owner = this.$isSubdocument ? this.ownerDocument() : this;
    const at = this.$isSubdocument ? subdocumentPath(this) : undefined;
    for (const numbered of fields.values()) await numberOne(owner.constructor, numbered, this, at);
  };
  schema.pre("validate", numberDocument);
  schema.pre("save", numberDocument);
  // A stored document saved once it matches `when`: numbered by a write conditioned on it still
  // matching and unnumbered (the package's assign), never twice whoever else saves it.
  schema.post("save", async function () {
    if (this.$isSubdocument) return;
    for (const numbered of fields.values()) {
      if (numbered.when !== undefined && isUnset(this, numbered.field) && numbered.when.test(this)) await assignStored(this.constructor, numbered, this);
    }
  });
  // Model middleware: mongoose 8 passes `next` first (and needs a declared parameter to pass
  // anything), mongoose 9 the arguments alone. Both await the promise.
  schema.pre("insertMany", function (first, second) {
    const docs = typeof first === "function" ? second : first;
    return numberBatch(this, fields, Array.isArray(docs) ? docs : [docs]);
  });
  schema.pre("bulkWrite", function (first, second) {
    const ops = typeof first === "function" ? second : first;
    const docs = Array.isArray(ops) ? ops.map((op) => op?.insertOne?.document).filter((doc) => doc !== undefined) : [];
    return numberBatch(this, fields, docs);
  });

  schema.static("sequence", function (field) {
    return sequenceOf(this, pick(fields, field));
  });
  schema.static("setNext", async function (next, options) {
    const { field, ...setNextOptions } = checkKnownKeys("setNext options", options, ["field", "scope", "force"]);
    return sequenceOf(this, pick(fields, field)).setNext(next, setNextOptions);
  });
  schema.static("current", async function (options) {
    const { field, scope } = checkKnownKeys("current options", options, ["field", "scope"]);
    return sequenceOf(this, pick(fields, field)).current(scope);
  });
  schema.static("adoptDefinition", async function (options) {
    const { field, scope } = checkKnownKeys("adoptDefinition options", options, ["field", "scope"]);
    return sequenceOf(this, pick(fields, field)).adoptDefinition({ scope });
  });
  schema.static("rewindAll", async function (options) {
    const { field, ...rewindOptions } = checkKnownKeys("rewindAll options", options, ["field", "force"]);
    return sequenceOf(this, pick(fields, field)).rewindAll(rewindOptions);
  });
  schema.static("assignNumbers", async function (options) {
    const { field, filter = {}, sort } = checkKnownKeys("assignNumbers options", options, ["field", "filter", "sort"]);
    const numbered = pick(fields, field);
    if (!isDocument(filter)) throw invalidArgument("filter", `must be a document, got ${describe(filter)}`);
    return assignMatching(this, numbered, { ...filter, ...numbered.when?.filter }, sort);
  });
  // The model's own collection and field: a number one of its documents holds is refused.
  schema.static("voidNumber", async function (numbers, options) {
    const { field, ...voidOptions } = checkKnownKeys("voidNumber options", options, ["field", "reason", "by", "scope", "period"]);
    const numbered = pick(fields, field);
    return sequenceOf(this, numbered).void(numbers, { ...voidOptions, collection: this.collection, field: numbered.field });
  });
  // mongoose-sequence's `counterReset(id)`: every counter of an existing sequence (each scope)
  // back to `start`; a name that is none of the model's sequences, or a sequence without any
  // counter, is refused (nothing written) rather than making a new one.
  schema.static("rewindSequence", async function (first, second) {
    const [name, options] = typeof first === "string" ? [first, second] : [undefined, first];
    const { field, force } = checkKnownKeys("rewindSequence options", options, ["field", "force"]);
    const numbered = name === undefined ? pick(fields, field) : pickByName(this, fields, name);
    return sequenceOf(this, numbered).rewindExisting({ force });
  });
  schema.static("seedFromMax", async function (options) {
    const { field, scope } = checkKnownKeys("seedFromMax options", options, ["field", "scope"]);
    const numbered = pick(fields, field);
    return sequenceOf(this, numbered).seedFromMax(this.collection, numbered.field, { scope });
  });
}

/**
 * mongoose-sequence's `doc.setNext(id)`: numbers this document, which has no number yet (a
 * document saved without one: `when` did not match, or it was inserted by other means), with
 * the next number of its sequence — the field's, or the one named — whether or not it matches
 * `when`. A new document gets it in hand (its save writes it); a stored one by the package's
 * `assign` for its `_id`, a write conditioned on it still having no number. Refused, nothing
 * reserved: a document that has a number (never renumbered), a name none of the model's
 * sequences has, and — unless `force` — a sequence whose counters a mongo-seq sidecar keeps
 * (GAPLESS_REFUSED: the core's rule, as for `rewindSequence`).
 */
function installMethods(schema, fields) {
  schema.method("setNext", async function (first, second) {
    const [name, options] = typeof first === "string" ? [first, second] : [undefined, first];
    const { field, force } = checkKnownKeys("setNext options", options, ["field", "force"]);
    const model = this.constructor;
    const numbered = name === undefined ? pick(fields, field) : pickByName(model, fields, name);
    if (!isUnset(this, numbered.field)) {
      throw invalidArgument("document", `already has number ${String(valueOf(this, numbered.field))} in \`${numbered.field}\`: a document is numbered once, never renumbered`);
    }
    // A sequence a sidecar keeps (maybe gapless) is not numbered behind its back: the core says which.
    if (!checkBoolean("force", force)) await sequenceOf(model, numbered).checkNotKept();
    if (this.isNew) {
      await numberOne(model, { ...numbered, when: undefined }, this, undefined);
      return valueOf(this, numbered.field);
    }
    const { field: path, formatField, periodField } = numbered;
    const { assigned, skipped } = await assignMatching(model, numbered, { _id: this._id }, undefined, this);
    if (skipped.length > 0) throw mongoSeqError(skipped[0].code, skipped[0].message, { argument: "document" });
    if (assigned.length === 0) {
      throw invalidArgument("document", `\`${this._id}\` was not numbered: it is not stored, or another process numbered it meanwhile (read it again)`);
    }
    assign(this, numbered, sequenceOf(model, numbered), assigned[0].value, assigned[0].period);
    for (const written of [path, periodField, formatField]) if (written !== undefined) this.unmarkModified(written);
    return assigned[0].value;
  });
}

/** The numbered field whose sequence (for `model`) is named `name`; refused when none is. */
function pickByName(model, fields, name) {
  const names = [...fields.values()].map((numbered) => [numbered, sequenceOf(model, numbered).name]);
  const found = names.find(([, sequence]) => sequence === name);
  if (found === undefined) {
    throw invalidArgument("sequence", `${describe(name)} is not a sequence of model \`${model.modelName}\` (its sequences: ${names.map(([, sequence]) => `\`${sequence}\``).join(", ")}): nothing written`);
  }
  return found[0];
}

/**
 * With the option `seedFromMax`: before a counter's first number in this process, the counter
 * is moved past the largest number already in the model's collection (among the documents of
 * its scope): @typegoose/auto-increment's start after the existing values, without a call.
 * Once per counter and process (concurrent first uses share it); `$max`, so never backwards.
 */
function ensureSeeded(model, numbered, sequence, doc) {
  if (!numbered.seedFromMax) return Promise.resolve();
  let seeded = seededBySequence.get(sequence);
  if (seeded === undefined) seededBySequence.set(sequence, (seeded = new Map()));
  const scope = numbered.scope.length > 0 ? scopeOf(doc, numbered.scope) : undefined;
  const counterId = sequence.counterId(scope);
  let seeding = seeded.get(counterId);
  if (seeding === undefined) {
    seeding = sequence.seedFromMax(model.collection, numbered.field, { scope });
    seeded.set(counterId, seeding);
    // A failed seed is tried again by the next number.
    seeding.catch(() => seeded.delete(counterId));
  }
  return seeding;
}
const seededBySequence = new WeakMap();

/** The numbered field a static is about: `field`, or the only one. */
function pick(fields, field) {
  if (field === undefined) {
    if (fields.size === 1) return fields.values().next().value;
    throw invalidOption("field", `is required: this model numbers several fields (${[...fields.keys()].join(", ")})`);
  }
  const numbered = fields.get(field);
  if (numbered === undefined) throw invalidOption("field", `${describe(field)} is not numbered by mongo-seq (numbered: ${[...fields.keys()].join(", ")})`);
  return numbered;
}

/** A new document saved: the next number (in the period of its `dateField`), unless the application set one or it does not match `when`. */
async function numberOne(model, numbered, doc, at) {
  const sequence = sequenceOf(model, numbered, at);
  if (!isUnset(doc, numbered.field)) return formatSetNumber(doc, numbered, sequence);
  if (numbered.when !== undefined && !numbered.when.test(doc)) return;
  const scope = numbered.scope.length > 0 ? scopeOf(doc, numbered.scope) : undefined;
  const date = dateOf(doc, numbered);
  // A sub-document's numbers live below its path in the owner's documents: not seeded.
  if (at === undefined) await ensureSeeded(model, numbered, sequence, doc);
  const { value, period } = await explained(numbered, sequence.nextFormatted(scope, date === undefined ? undefined : { date }));
  assign(doc, numbered, sequence, value, period);
}

/** A stored document that came to match `when`: the package's assign for its `_id`, then the number on the document in hand. */
async function assignStored(model, numbered, doc) {
  const { assigned } = await assignMatching(model, numbered, { ...numbered.when.filter, _id: doc._id }, undefined, doc);
  const paths = [numbered.field, numbered.periodField, numbered.formatField].filter((path) => path !== undefined);
  if (assigned.length > 0) {
    const { value, period } = assigned[0];
    assign(doc, numbered, sequenceOf(model, numbered), value, period);
  } else {
    // Numbered meanwhile by another process (or no longer matching): what is stored, read as
    // `waitForNumber` reads (majority-committed, from the primary: never a number a failover
    // could take back).
    const projection = Object.fromEntries(paths.map((path) => [path, 1]));
    const stored = await model.collection.findOne({ _id: doc._id }, { projection, readConcern: { level: "majority" }, readPreference: "primary" });
    for (const path of paths) {
      const value = stored === null ? undefined : valueOf(stored, path);
      if (value !== undefined) setValue(doc, path, value);
    }
  }
  // Written already: a later save() need not send them again.
  for (const path of paths) doc.unmarkModified(path);
}

/**
 * The package's assign over the model's collection: documents matching `filter` without a
 * number (`doc`: the one document it is about, whose scope a `seedFromMax` seed needs; without
 * it only an unscoped sequence's counter is seeded first).
 */
async function assignMatching(model, numbered, filter, sort, doc) {
  const { field, formatField, dateField } = numbered;
  const sequence = sequenceOf(model, numbered);
  if (doc !== undefined || numbered.scope.length === 0) await ensureSeeded(model, numbered, sequence, doc ?? {});
  return explained(numbered, sequencesOf(model.db, numbered.counters).assign(model.collection, filter, { sequence, field, formatField, dateField, sort }));
}

/**
 * The instant a document is numbered at: its `dateField` (ms since the epoch; a value that is not
 * a Date is INVALID_DATE naming `dateField`, the range the core's), or undefined (now).
 */
function dateOf(doc, { dateField }) {
  if (dateField === undefined) return undefined;
  const value = valueOf(doc, dateField);
  if (!(value instanceof Date)) {
    throw mongoSeqError("INVALID_DATE", `invalid date \`dateField\`: \`${dateField}\` of the document must be a Date, got ${describe(value)}`, { argument: "dateField" });
  }
  return core.checkInstant("dateField", value.getTime());
}

/** The path of a sub-document in its parent (`nested`, `items`), which names its sequence. */
function subdocumentPath(doc) {
  const path = doc.$basePath ?? doc.__parentArray?.$path?.();
  if (typeof path === "string" && path !== "") return path;
  throw invalidOption("sequence", "is required to number this sub-document: mongo-seq cannot tell its path in the parent document, which would name its sequence");
}

/** A SEQUENCE_EXHAUSTED at the bound the field's type set says why the bound is there. */
async function explained(numbered, promise) {
  try {
    return await promise;
  } catch (error) {
    if (numbered.bound !== undefined && error?.code === "SEQUENCE_EXHAUSTED") {
      error.message = `${error.message}: ${numbered.bound.fix}`;
    }
    throw error;
  }
}

/**
 * A batch (insertMany, bulkWrite insertOne): the documents without a number, grouped by
 * counter, one `nextMany` per counter. Every counter id is worked out (a missing scope field
 * refused) before anything is reserved.
 */
async function numberBatch(model, fields, docs) {
  // One instant for the documents without a date, so a batch straddling a period's end is
  // numbered and labelled in one period.
  const now = Date.now();
  for (const numbered of fields.values()) {
    const sequence = sequenceOf(model, numbered);
    const groups = new Map();
    for (const doc of docs) {
      if (doc === null || typeof doc !== "object") continue; // mongoose refuses it itself
      if (!isUnset(doc, numbered.field)) {
        formatSetNumber(doc, numbered, sequence);
        continue;
      }
      // Scope values and dates as mongoose casts them (a string id becomes the ObjectId a save would see).
      const cast = doc instanceof model ? doc : new model(doc);
      if (numbered.when !== undefined && !numbered.when.test(cast)) continue;
      const scope = numbered.scope.length > 0 ? scopeOf(cast, numbered.scope) : undefined;
      const date = dateOf(cast, numbered) ?? (numbered.periodField === undefined ? undefined : now);
      const period = sequence.periodOf(date);
      const counterId = sequence.counterId(scope, period);
      let group = groups.get(counterId);
      if (group === undefined) groups.set(counterId, (group = { scope, period, options: date === undefined ? undefined : { date }, docs: [], cast }));
      group.docs.push(doc);
    }
    const groupList = [...groups.values()];
    await Promise.all(groupList.map((group) => ensureSeeded(model, numbered, sequence, group.cast)));
    const numbers = await Promise.all(groupList.map((group) => explained(numbered, sequence.nextMany(group.docs.length, group.scope, group.options))));
    groupList.forEach((group, g) => group.docs.forEach((doc, i) => assign(doc, numbered, sequence, numbers[g][i], group.period)));
  }
}

/** Writes the number, its period (a sequence that resets) and the formatted id (unless the application set one). */
function assign(doc, { field, formatField, periodField }, sequence, value, period) {
  setValue(doc, field, value);
  if (periodField !== undefined) setValue(doc, periodField, period);
  if (formatField !== undefined && isUnset(doc, formatField)) setValue(doc, formatField, sequence.format(value, period));
}

/** A number the application set: its formatted id (in its period, or that of its date), when the application left that unset. */
function formatSetNumber(doc, numbered, sequence) {
  const value = valueOf(doc, numbered.field);
  if (numbered.formatField !== undefined && (Number.isSafeInteger(value) || typeof value === "bigint") && isUnset(doc, numbered.formatField)) {
    const period = numbered.periodField === undefined ? undefined : (valueOf(doc, numbered.periodField) ?? sequence.periodOf(dateOf(doc, numbered)));
    setValue(doc, numbered.formatField, sequence.format(value, period));
  }
}

/**
 * Whether `path` is for mongo-seq to fill: no value, and no value the application gave that
 * mongoose could not cast (mongoose leaves the path empty and records a CastError, which must
 * reach the caller rather than be overwritten by a number).
 */
function isUnset(doc, path) {
  const value = valueOf(doc, path);
  if (value !== undefined && value !== null) return false;
  return !isMongooseDocument(doc) || doc.errors?.[path] === undefined;
}

function isMongooseDocument(doc) {
  return typeof doc.get === "function" && doc.$__ !== undefined;
}

/** A path of a mongoose document or of a plain object. */
function valueOf(doc, path) {
  if (isMongooseDocument(doc)) return doc.get(path);
  return path.split(".").reduce((parent, key) => (parent === null || parent === undefined ? undefined : parent[key]), doc);
}

function setValue(doc, path, value) {
  if (isMongooseDocument(doc)) return void doc.set(path, value);
  const keys = path.split(".");
  let parent = doc;
  for (const key of keys.slice(0, -1)) {
    if (!isDocument(parent[key])) parent[key] = {};
    parent = parent[key];
  }
  parent[keys.at(-1)] = value;
}

/** The scope document of a mongoose document: its values of the scope paths (missing ones left out, for the core to name). */
function scopeOf(doc, paths) {
  const scope = {};
  for (const path of paths) {
    const value = valueOf(doc, path);
    if (value !== undefined) setValue(scope, path, value);
  }
  return scope;
}

/** Sequences per connection and counters collection; the Sequence of a model's field. */
const sequencesByConnection = new WeakMap();
const sequenceByModel = new WeakMap();

function sequenceOf(model, numbered, at) {
  let byField = sequenceByModel.get(model);
  if (byField === undefined) sequenceByModel.set(model, (byField = new Map()));
  const path = at === undefined ? numbered.field : `${at}.${numbered.field}`;
  let sequence = byField.get(path);
  if (sequence === undefined) {
    sequence = sequencesOf(model.db, numbered.counters).sequence(sequenceName(model, numbered, path), numbered.sequenceOptions);
    byField.set(path, sequence);
  }
  return sequence;
}

/**
 * The sequence's name: the option, what the option's function returns for the model's name and
 * the model (one plugin call shared by several models or discriminators; the arguments of
 * typegoose's `overwriteModelName`, so its function moves over as it is), or
 * `<collection>.<path>`. Checked before anything is reserved.
 */
function sequenceName(model, numbered, path) {
  if (typeof numbered.sequence === "string") return numbered.sequence;
  if (numbered.sequence === undefined) return `${model.collection.collectionName}.${path}`;
  const name = numbered.sequence(model.modelName, model);
  if (typeof name !== "string" || name === "") {
    throw invalidOption("sequence", `the function returned ${describe(name)} for the model \`${model.modelName}\`: it must return a sequence name`);
  }
  return name;
}

/**
 * The `Sequences` of a connection. Its collections are mongoose's, which wait for the
 * connection to open like the model's own operations; the BSON library is that of mongoose's
 * driver (it may be another copy of `mongodb` than the one this package resolves).
 */
function sequencesOf(connection, counters) {
  let byCounters = sequencesByConnection.get(connection);
  if (byCounters === undefined) sequencesByConnection.set(connection, (byCounters = new Map()));
  let sequences = byCounters.get(counters);
  if (sequences === undefined) {
    const db = { collection: (name) => connection.collection(name), databaseName: typeof connection.name === "string" ? connection.name : undefined };
    sequences = new Sequences(db, { collection: counters, bson: connection.base?.mongo?.BSON });
    byCounters.set(counters, sequences);
  }
  return sequences;
}
