//! TypeScript declarations of the plain values crossing the boundary (the core's serde types),
//! referenced by the generated signatures through `unchecked_*_type`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/**
 * An integer: a number (a safe integer: beyond 2^53 - 1 a JS number is not exact and is
 * refused), a bigint within the signed 64-bit range, or Extended JSON `{ $numberLong: "…" }`.
 */
export type Integer = number | bigint | { $numberLong: string };
/** An integer the core hands back: a number when within ±(2^53 - 1), else a bigint. */
export type CoreInteger = number | bigint;
/** A document in MongoDB Extended JSON v2 (canonical or relaxed). */
export type EjsonDocument = { [key: string]: unknown };

/** Sequence options as given (validated by the core; unknown keys are UNKNOWN_OPTION). */
export interface SequenceOptions {
  /** 1–200 bytes, no `/`, control characters or surrounding spaces. */
  name: string;
  /** First number issued (default 1). */
  start?: Integer;
  /** Increment, non-zero; negative counts down (default 1). */
  step?: Integer;
  /** Lowest value ever issued (the bound when counting down). */
  min?: Integer | null;
  /** Highest value ever issued (the bound when counting up). */
  max?: Integer | null;
  /** Numbers reserved per round trip, 1 to 1,000,000 (default 1). Unused numbers of a block are a gap. */
  block?: Integer;
  /**
   * Reserve the next block when half of the one in hand is left, so callers rarely wait for a
   * round trip (needs `block` ≥ 2; default false). A process then holds up to one and a half
   * blocks, all lost (a gap) when it exits.
   */
  refillAhead?: boolean | null;
  /**
   * The most one round trip reserves as the block grows under load (default 10 × `block`, at
   * most 1,000,000; `block` itself for `block: 1`): while refills come less than a second apart
   * the block doubles, up to this; more than two seconds apart it halves, back to `block`. A
   * process loses at most this many numbers (one and a half times with `refillAhead`) when it
   * exits. `maxBlock: block` keeps every block at `block`.
   */
  maxBlock?: Integer | null;
  /** Field paths: one counter per combination of their values in the document. */
  scope?: string[] | null;
  /**
   * Id template such as `INV-{seq:06}`; with `reset`, the period's `{yyyy}`, `{yy}`, `{mm}`
   * (monthly, daily) and `{dd}` (daily) too: `INV-{yyyy}-{seq:06}`.
   */
  format?: string | null;
  /**
   * Start the series again every period (default `"never"`): one counter per (fiscal) year,
   * month or day, the period last in its id (`inv/2026`, `inv/tenantId=acme/2026-05`).
   */
  reset?: "never" | "yearly" | "monthly" | "daily" | null;
  /**
   * The IANA zone whose local dates the periods follow (default `"UTC"`; only with `reset`).
   * The core checks the syntax; the host checks that the zone exists.
   */
  timeZone?: string | null;
  /**
   * The month (1 to 12) a yearly sequence's fiscal year starts in (default 1). The year is
   * named after the calendar year it ends in: with 4, 2026-04-01 … 2027-03-31 is 2027.
   */
  yearStart?: Integer | null;
  /**
   * The counter documents' number field (default `seq`, the tutorial's): `sequence` for the Go
   * block-allocation article's counters, `seq_value` for the Atlas trigger recipe's.
   */
  counterField?: string | null;
  /**
   * The counter document's `_id` when it is not the name (an unscoped sequence only): a string,
   * or a document such as the Atlas trigger recipe's `{ db, coll }` (its field order kept).
   */
  counterId?: string | { [key: string]: unknown } | null;
  /**
   * A sealed series: the fields each number's SHA-256 seal chains (numbered only by a mongo-seq
   * sidecar's gapless trigger; the package verifies it: `verifySeal`).
   */
  sealFields?: string[] | null;
}
/** Options after validation, defaults filled in. */
export interface NormalizedSequenceOptions {
  name: string;
  start: CoreInteger;
  step: CoreInteger;
  min: CoreInteger | null;
  max: CoreInteger | null;
  block: CoreInteger;
  refillAhead: boolean;
  /** Present when not the default (10 × `block`). */
  maxBlock?: CoreInteger;
  scope: string[];
  format: string | null;
  /** Present (with `timeZone`) when the sequence resets. */
  reset?: "yearly" | "monthly" | "daily";
  timeZone?: string;
  /** Present when the sequence resets yearly. */
  yearStart?: number;
  counterField: string;
  /** Present when the options name the counter's `_id`. */
  counterId?: string | EjsonDocument;
  /** Present when the series is sealed. */
  sealFields?: string[];
}

/** What to reserve; `minCount` (default `count`) accepts a shorter range near the bound. */
export interface ReserveRequest {
  counterId: string;
  count: number;
  minCount?: number;
  extraFilter?: EjsonDocument;
  extraSet?: EjsonDocument;
  /** Record the sequence's definition on the counter; SEQUENCE_CONFLICT for another one (default true). */
  checkDefinition?: boolean;
}
/** `count` numbers `first, first + step, …, last`. */
export interface ReservedRange {
  first: CoreInteger;
  last: CoreInteger;
  step: CoreInteger;
  count: number;
}
/** The last number issued (null: no counter) and the next one due (null: exhausted). */
export interface CounterState {
  last: CoreInteger | null;
  next: CoreInteger | null;
}
export interface SetNextOutcome {
  previousLast: CoreInteger | null;
  created: boolean;
  next: CoreInteger;
}
/** What `adoptDefinition` did: the counter's definition before (null: none) and now, and the options that changed. */
export interface AdoptOutcome {
  counterId: string;
  previous: CounterDefinition | null;
  definition: CounterDefinition;
  changed: string[];
}
/**
 * The options a counter records beside its number: `start` and `step` always; `min`, `max`,
 * `format`, `gapless` only when set; `reset` and `timeZone` for a sequence that resets, and
 * `yearStart` for a yearly one, always (defaults included: `"UTC"`, 1).
 */
export interface CounterDefinition {
  start: CoreInteger;
  step: CoreInteger;
  min?: CoreInteger;
  max?: CoreInteger;
  /** Only for a sequence that resets. */
  reset?: string;
  /** Only for a sequence that resets, `"UTC"` too. */
  timeZone?: string;
  /** Only for a yearly sequence, 1 too. */
  yearStart?: CoreInteger;
  format?: string;
  gapless?: boolean;
}
/** What `voidNumbers` voids: numbers of one counter, the documents' number field, why, who, when. */
export interface VoidRequest {
  counterId: string;
  numbers: CoreInteger[];
  field: string;
  reason: string;
  by: string;
  nowMs: number;
}
/** The numbers voided, in the order given, and when. */
export interface VoidOutcome {
  counterId: string;
  numbers: CoreInteger[];
  atMs: number;
}
/** What `rewindAll` did: how many counters (every scope) it set back, and the number each issues next. */
export interface RewindOutcome {
  rewound: number;
  next: CoreInteger;
}
/** What `checkNotKept` found: how many counters the sequence has, none of them kept by a sidecar. */
export interface KeptCheck {
  counters: number;
}
/** What `importCounters` reads and writes: the plugin, dry run unless `apply`, collections, renames. */
export interface ImportRequest {
  from: "mongoose-sequence" | "auto-increment";
  apply?: boolean;
  /** The plugin's collection (default `counters` for mongoose-sequence, `identitycounters` otherwise). */
  source?: string;
  /** mongo-seq's counters collection (default `counters`). */
  counters?: string;
  /** Sequence names by source key (mongoose-sequence's `id`, or `<model>.<field>`). */
  names?: Record<string, string>;
  counterField?: string;
}
/** One adopted counter: the source's last number, mongo-seq's before and after, and what was done. */
export interface ImportedCounter {
  source: Record<string, unknown>;
  sequence: string;
  scope: string[];
  counterId: string;
  sourceLast: CoreInteger;
  before: CoreInteger | null;
  action: "create" | "advance" | "keep";
  after: CoreInteger | null;
}
export interface ImportReport {
  from: "mongoose-sequence" | "auto-increment";
  applied: boolean;
  counters: ImportedCounter[];
  skipped: { source: Record<string, unknown>; reason: string }[];
}
export interface OptimisticOutcome {
  value: CoreInteger;
  formatted: string | null;
}
/** The number of each document of an insert, in input order, the formatted ids when a `formatField` was given, and the periods when the sequence resets. */
export interface InsertOutcome {
  values: CoreInteger[];
  formatted: string[] | null;
  periods?: string[];
}

/** What `audit` found (see the core's audit module). */
/** A link of a sealed series (see docs/sealed-series.md). */
export interface SealLink {
  /** The series' counter id. */
  series: string;
  kind: "issue" | "void" | "deletion";
  number: Integer;
  /** The period of a series that resets. */
  period?: string | null;
  /** The sealed fields' values by path, as canonical Extended JSON. */
  fields: EjsonDocument;
}
/** A link's seal: its hash and the hash of the link before it. */
export interface Seal {
  hash: string;
  previous: string | null;
}
/** A link's seal and the encoding it hashed. */
export interface SealedLink extends Seal {
  encoding: string;
}
/** A link read back, with the seal stored with it (none: not sealed, or its seal removed). */
export interface StoredSealLink extends SealLink {
  seal?: Seal | null;
}
/** One series' chain verified: the first and last link, and every link that does not verify. */
export interface SeriesSealReport {
  series: string;
  links: number;
  first: { number: CoreInteger; kind: string; hash: string } | null;
  last: { number: CoreInteger; kind: string; hash: string } | null;
  verified: boolean;
  failures: { number: CoreInteger; kind: string; reason: "FIELD_CHANGED" | "LINK_MISSING" | "LINK_INSERTED" | "OUT_OF_ORDER" | "SEAL_REMOVED"; detail: string }[];
  pending: number;
  beforeSealing: number;
}
export interface AuditReport {
  total: number;
  invalid: number;
  offGrid: number;
  distinct: number;
  duplicateValues: number;
  duplicates: Array<{ value: CoreInteger; occurrences: number }>;
  gapCount: number;
  gaps: Array<{ first: CoreInteger; last: CoreInteger; count: number }>;
  largest: CoreInteger | null;
  counter: CoreInteger | null;
  counterOk: boolean;
}

/** A run of one class of numbers: `first, first + step, …, last`. */
export interface AccountRun {
  class: "held" | "voided" | "deleted" | "gap" | "duplicate";
  first: CoreInteger;
  last: CoreInteger;
  count: CoreInteger;
}
/** What `account` found for one counter (see the core's account module). */
export interface Account {
  start: CoreInteger;
  step: CoreInteger;
  counter: CoreInteger | null;
  end: CoreInteger | null;
  numbers: CoreInteger;
  held: CoreInteger;
  voided: CoreInteger;
  deleted: CoreInteger;
  gaps: CoreInteger;
  duplicates: CoreInteger;
  invalid: CoreInteger;
  offGrid: CoreInteger;
  beyondCounter: CoreInteger;
  outside: CoreInteger;
  unreadable: CoreInteger;
  reasons: Array<{ reason: string; count: CoreInteger }>;
  runs: AccountRun[];
  runsTruncated: boolean;
  gapRuns: AccountRun[];
  duplicateNumbers: Array<{ number: CoreInteger; held: CoreInteger; recorded: Array<"void" | "deleted"> }>;
}
/** Unnumbered documents against dead letters (see the core's account module). */
export interface Unnumbered {
  deadLetters: number;
  unexplained: number;
  staleDeadLetters: number;
  examples: unknown[];
}

/** A database operation for the caller's driver; documents are canonical Extended JSON. */
export type Command =
  | { op: "findOneAndUpdate"; collection: "counters" | "documents"; filter: EjsonDocument; update: EjsonDocument;
      options: { upsert: boolean; returnDocument: "before" | "after" } }
  | { op: "findOne"; collection: "counters" | "documents"; filter: EjsonDocument;
      options?: { sort: EjsonDocument; projection: EjsonDocument } }
  | { op: "insertOne"; collection: "counters" | "documents"; document: EjsonDocument }
  /** Set `fields` on the caller's document and insert it; with `duplicateKeyOn`, only a duplicate key on that field is a `duplicateKey` reply. */
  | { op: "insertDocument"; collection: "counters" | "documents"; fields: EjsonDocument; duplicateKeyOn?: string }
  /** Set `fields[i]` on the caller's document `first + i` and insert them in order; reply `writeResult`. */
  | { op: "insertDocuments"; collection: "counters" | "documents"; first: number; fields: EjsonDocument[]; duplicateKeyOn: string }
  /** Take `count` numbers of counter `counterId` from the caller's BlockCounter; reply `numbers`. */
  | { op: "take"; counterId: string; count: number }
  /** Sleep a duration drawn uniformly from minMs..=maxMs, then reply `waited`. */
  | { op: "wait"; minMs: number; maxMs: number }
  /**
   * The local date (`YYYY-MM-DD`) in the IANA zone `timeZone` of each instant (ms since the
   * epoch, within the range `checkInstant` accepts), with the host's tz data; reply
   * `localDates` in the same order.
   */
  | { op: "localDates"; timeZone: string; instants: number[] };
/** The outcome of a command, fed back to the plan. */
export type Reply =
  | { kind: "document"; document: EjsonDocument }
  | { kind: "none" }
  | { kind: "inserted" }
  | { kind: "duplicateKey"; errmsg?: string; keyPattern?: Record<string, unknown>; index?: string }
  | { kind: "waited" }
  | { kind: "numbers"; values: Integer[] }
  | { kind: "localDates"; dates: string[] }
  | { kind: "writeResult"; n: number; nModified: number;
      writeErrors?: Array<{ index: number; code: number; errmsg: string }>;
      writeConcernError?: { code: number; errmsg: string } };
/** What a plan wants next. */
/** A counter id read back (`counterKey`). */
export interface CounterKey {
  name: string;
  /** The scope fields and their values, in order. */
  scope: Array<[string, { type: "string" | "integer" | "boolean" | "objectId"; value: unknown }]>;
  /** The period (`2026`, `2026-05`, `2026-05-17`) of a sequence that resets. */
  period?: string;
}
/** What an `assign` plan did. */
export interface AssignOutcome {
  /** The numbers this call gave, in the order of the sort. */
  assigned: Array<{ _id: unknown; value: CoreInteger; formatted?: string; period?: string }>;
  /** Documents it could not number (a scope field missing, a dateField that is not a date). */
  skipped: Array<{ _id: unknown; code: string; message: string }>;
}
export type PlanStep = { command: Command } | { done: unknown };

/** Every error the core throws: an `Error` with a stable `code`. */
export interface MongoSeqError extends Error {
  name: "MongoSeqError";
  code: string;
  details?: Record<string, unknown>;
}
"#;
