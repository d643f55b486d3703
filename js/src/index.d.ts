// Type declarations of the mongo-seq package (ESM and CJS entries share them).
import type { Collection, Db, Document } from "mongodb";
import type * as CoreModule from "./core.js";
import type { AdoptOutcome, CoreInteger, CounterState, Integer, NormalizedSequenceOptions, RewindOutcome, SeriesSealReport, SetNextOutcome } from "./core.js";
import type { SequenceOptions as CoreSequenceOptions } from "./core.js";

export type { AdoptOutcome, CounterDefinition, CoreInteger, CounterState, Integer, NormalizedSequenceOptions, RewindOutcome, SeriesSealReport, SetNextOutcome, MongoSeqError, ImportRequest, ImportReport, ImportedCounter, AssignOutcome } from "./core.js";
import type { AssignOutcome } from "./core.js";
import type { ImportRequest, ImportReport } from "./core.js";

/** A number handed out: a JS number up to 2^53 - 1, a bigint beyond. */
export type SequenceNumber = number | bigint;

/** Options of one sequence: the core's, without the name (given separately). */
export type SequenceOptions = Omit<CoreSequenceOptions, "name">;

export interface SequencesOptions {
  /** Name of the counters collection (default "counters"). */
  collection?: string;
  /** Name of the ledger collection beside the counters: voided numbers, deleted documents' numbers (default "mongo_seq_ledger"). */
  ledger?: string;
  /**
   * The BSON library of the driver that made `db`, when it is another copy of `mongodb` than the
   * one this package resolves (mongoose ships its own: `mongoose.mongo.BSON`). Default: the
   * `BSON` export of the `mongodb` package.
   */
  bson?: object;
}

/** A scope document: supplies the values of the sequence's `scope` fields. */
export type ScopeDocument = Document;

export interface ScopeOption {
  /** Scope values (required for a scoped sequence). */
  scope?: ScopeDocument;
}

export interface PeriodOption {
  /** The counter's period (`"2026"`, `"2026-05"`, `"2026-05-17"`): required exactly when the sequence resets (`periodOf(date)` gives it). */
  period?: string;
}

export interface SetNextOptions extends ScopeOption, PeriodOption {
  /** Allow moving the counter backwards (default false: BACKWARDS_REFUSED). */
  force?: boolean;
}

export interface VoidOptions extends ScopeOption, PeriodOption {
  /** Why the numbers are voided (required, non-blank). */
  reason: string;
  /** Who voids them (default: this host's name). */
  by?: string;
  /** The collection whose documents hold the sequence's numbers: a number a document holds is refused (NUMBER_HELD). */
  collection: Collection<any>;
  /** The field holding the numbers (default `_id`). */
  field?: string;
}

/** What `void` recorded: the numbers, in the order given, and when (ms since the epoch). */
export interface VoidOutcome {
  counterId: string;
  numbers: SequenceNumber[];
  atMs: number;
}

/** An instant: a Date, or milliseconds since the epoch (an integer from year 1 to 9999-12-29). */
export type Instant = Date | number;

export interface NextOptions {
  /** The instant whose period a sequence that resets numbers in (default now); checked for every sequence (INVALID_ARGUMENT, INVALID_DATE naming `date`). */
  date?: Instant;
}

/** A number with its period and formatted id (`nextFormatted`). */
export interface FormattedNumber {
  value: SequenceNumber;
  /** The period (undefined when the sequence never resets). */
  period: string | undefined;
  /** The formatted id (undefined without a `format`). */
  formatted: string | undefined;
}

export declare class Sequence {
  private constructor();
  /** The sequence name. */
  readonly name: string;
  /** The validated options, defaults filled in. */
  readonly options: Readonly<NormalizedSequenceOptions>;
  /** The counter `_id` for a scope document, in `period` (required exactly when the sequence resets). */
  counterId(scope?: ScopeDocument, period?: string): string;
  /** The period of `date` (default now) in the sequence's time zone; undefined when it never resets. */
  periodOf(date?: Instant): string | undefined;
  /** The formatted id of `value` (undefined without a `format`) in `period` (required when the sequence resets). */
  format(value: Integer, period?: string): string | undefined;
  /**
   * The next number; one round trip per `block` numbers. A sequence that resets numbers in the
   * period of `date` (default now): `next({ date })` unscoped, `next(scope, { date })` scoped.
   */
  next(options?: NextOptions): Promise<SequenceNumber>;
  next(scope: ScopeDocument | undefined, options?: NextOptions): Promise<SequenceNumber>;
  /** The next number with its period and formatted id. Arguments as `next`. */
  nextFormatted(options?: NextOptions): Promise<FormattedNumber>;
  nextFormatted(scope: ScopeDocument | undefined, options?: NextOptions): Promise<FormattedNumber>;
  /** `count` numbers (0 to 1,000,000) in order, in one round trip (0 gives []); scope and `{ date }` as `next`. */
  nextMany(count: number, options?: NextOptions): Promise<SequenceNumber[]>;
  nextMany(count: number, scope: ScopeDocument | undefined, options?: NextOptions): Promise<SequenceNumber[]>;
  /** The last number reserved on the server by any process (null: no counter yet). Reserves nothing. `{ period }` when the sequence resets. */
  current(options?: PeriodOption): Promise<SequenceNumber | null>;
  current(scope: ScopeDocument | undefined, options?: PeriodOption): Promise<SequenceNumber | null>;
  /** `{ last, next }` of the counter (next is null when exhausted). */
  state(options?: PeriodOption): Promise<CounterState>;
  state(scope: ScopeDocument | undefined, options?: PeriodOption): Promise<CounterState>;
  /** Makes `next` the next number issued; refuses to move backwards unless `force`. */
  setNext(next: Integer, options?: SetNextOptions): Promise<SetNextOutcome>;
  /**
   * Rewrites the counter's recorded definition to this sequence's options on purpose (every
   * reservation refuses a counter of another definition with SEQUENCE_CONFLICT); the number is
   * left as it is. INVALID_ARGUMENT for a counter that does not exist (nothing written).
   */
  adoptDefinition(options?: ScopeOption & PeriodOption): Promise<AdoptOutcome>;
  /**
   * Voids issued numbers no document holds (a cancelled invoice's): recorded in the ledger with
   * the reason, never handed out again. Every number is checked first; refused with nothing
   * written: NUMBER_HELD, NUMBER_NOT_ISSUED, ALREADY_VOIDED, INTENT_PENDING, INVALID_ARGUMENT (a
   * blank reason). Then each number is voided on its own, in order: a call that loses a number
   * to another void meanwhile stops with ALREADY_VOIDED, keeping the numbers it voided before,
   * listed in `details.voided` (`[]` when nothing was written).
   */
  void(numbers: Integer | Integer[], options: VoidOptions): Promise<VoidOutcome>;
  /**
   * Every counter of the sequence (unscoped and each scope) back to `start`; REWIND_REFUSED for
   * counters a mongo-seq sidecar keeps unless `force`. Resolves with how many were rewound.
   */
  rewindAll(options?: { force?: boolean }): Promise<RewindOutcome>;
  /**
   * Verifies every series of this sealed sequence (its `sealFields`) as stored — the documents
   * of `collection` numbered in `field`, the ledger, the counters — each chain re-computed: one
   * report per series (counter), by counter id; the first failure of a report is the first link
   * that does not verify. Reads only; INVALID_ARGUMENT naming `sealFields` for a sequence that
   * seals nothing.
   */
  verifySeal(options: VerifySealOptions): Promise<SeriesSealReport[]>;
  /** Moves the counter past the largest number in `field` (default `_id`) of a collection. */
  seedFromMax(collection: Collection<any>, field?: string, options?: ScopeOption): Promise<CounterState>;
  /** Moves the counter past `value` (never backwards). */
  seedFromMax(value: Integer, options?: ScopeOption & PeriodOption): Promise<CounterState>;
}

export interface VerifySealOptions {
  /** The collection whose documents hold the numbers (a sidecar's gapless trigger's). */
  collection: Collection<any>;
  /** The field holding the number (the trigger's `field`); each seal is in `<field>Seal`. */
  field: string;
}

export interface InsertOptions {
  /** The sequence: its name (defined with `sequence()` or defaults) or the object. */
  sequence: string | Sequence;
  /** Field that receives the number (default `_id`). */
  field?: string;
  /** Field that receives the formatted id (the sequence needs a `format`). */
  formatField?: string;
  /**
   * A sequence that resets: the document's Date field whose period it is numbered in (default:
   * now, one instant for the call). Missing, null, not a Date or out of range: INVALID_DATE
   * naming `dateField` (and the document's index), nothing inserted.
   */
  dateField?: string;
}

export interface AssignOptions extends InsertOptions {
  /** Field that receives the number (a nested path may be given). */
  field: string;
  /** Order in which matching documents get their numbers (then `_id`), e.g. `{ issuedAt: 1 }`. */
  sort?: Document;
}

export interface NumberingIndex {
  name: string;
  keys: Record<string, number>;
}

export interface InsertOneResult {
  /** The document's `_id` (the number when `field` is `_id`). */
  insertedId: unknown;
  value: SequenceNumber;
  formatted: string | undefined;
  /** Its period (`"2026"`); only when the sequence resets. */
  period?: string;
}

export interface InsertManyResult {
  insertedCount: number;
  /** `_id` of each document by its index in the input. */
  insertedIds: Record<number, unknown>;
  /** The number of each document, in input order. */
  values: SequenceNumber[];
  /** The formatted ids, when `formatField` was given. */
  formatted: string[] | undefined;
  /** The period of each (`"2026"`); only when the sequence resets. */
  periods?: string[];
}

export interface InsertOptimisticOptions {
  /** Sequence for start/step/bounds/scope/format (default: one named after the collection). */
  sequence?: string | Sequence;
  /** Field that receives the number; needs a unique index (default `_id`). */
  field?: string;
  /** Field that receives the formatted id. */
  formatField?: string;
  /** Inserts tried before TOO_MANY_RETRIES, 1 to 10,000 (default 100); lost races back off 0–100 ms. */
  maxAttempts?: number;
}

export interface WaitForNumberOptions {
  /** Field path the other process writes (default "seq"; may be nested, `meta.seq`). */
  field?: string;
  /** How long to wait, 0 to 2^31 - 1 ms (default 5000 ms); then WAIT_TIMEOUT. */
  timeoutMs?: number;
  /** Longest pause between two reads, 1 to 2^31 - 1 ms (default 200 ms). */
  pollMs?: number;
}

export declare class Sequences {
  constructor(db: Db, options?: SequencesOptions);
  /** The counters collection. */
  readonly counters: Collection;
  /** The ledger collection (voided numbers, deleted documents' numbers). */
  readonly ledger: Collection;
  /** The sequence `name`; the same name returns the same object (SEQUENCE_CONFLICT on other options). */
  sequence(name: string, options?: SequenceOptions): Sequence;
  /** Inserts a copy of `doc` with the next number; retries with a fresh number on a duplicate key on `field`. */
  insertOne(collection: Collection<any>, doc: Document, options: InsertOptions): Promise<InsertOneResult>;
  /** Inserts copies of `docs` (at most 1,000,000) numbered in order, one reservation per counter. */
  insertMany(collection: Collection<any>, docs: Document[], options: InsertOptions): Promise<InsertManyResult>;
  /** The tutorial's optimistic loop: max(field) + step, retry on a duplicate key. No counter. */
  insertOptimistic(collection: Collection<any>, doc: Document, options?: InsertOptimisticOptions): Promise<InsertOneResult>;
  /**
   * Numbers every document matching `filter` without a number in `field`, in `sort` order, each
   * write conditioned on the document still matching and unnumbered; safe from several processes
   * at once (never a number twice; a number reserved by a losing writer is a gap). Creates the
   * numbering index first (once per collection and field in this process).
   */
  assign(collection: Collection<any>, filter: Document, options: AssignOptions): Promise<AssignOutcome>;
  /** Creates the unique index numbering into `field` relies on: `{ <scope…>, <field>Period (a sequence that resets), <field> }`, partial on `field`. */
  createNumberingIndex(collection: Collection<any>, options: InsertOptions): Promise<NumberingIndex>;
  /** Resolves with the number another process (the sidecar) writes into `field` of document `id`. */
  waitForNumber(collection: Collection<any>, id: unknown, options?: WaitForNumberOptions): Promise<SequenceNumber>;
}

export interface ImportCountersOptions extends ImportRequest {
  /** The BSON library of the driver that made `db` (see `SequencesOptions.bson`). */
  bson?: object;
}

/**
 * Adopts the counters of mongoose-sequence (`from: "mongoose-sequence"`) or
 * mongoose-auto-increment / @typegoose/auto-increment (`from: "auto-increment"`): reads them
 * and mongo-seq's, and with `apply: true` moves mongo-seq's counters past them (never
 * backwards). A dry run by default; resolves with the report of every counter.
 */
export declare function importCounters(db: Db, options: ImportCountersOptions): Promise<ImportReport>;

/** True for errors raised by mongo-seq (an Error named MongoSeqError with a string `code`). */
export declare function isMongoSeqError(error: unknown): error is import("./core.js").MongoSeqError;

/** Codes raised by the JS layer itself (the core's: `core.errorCodes()`). */
export declare const JS_ERROR_CODES: readonly ["WAIT_TIMEOUT", "SEQUENCE_CONFLICT", "WASM_LOAD_FAILED"];

/** The package's answer to the core's `localDates` command: the local date (`YYYY-MM-DD`) of each instant in `timeZone`, by Intl (INVALID_OPTION `timeZone` for a zone the runtime does not know). */
export declare function localDates(timeZone: string, instants: Iterable<number>): string[];

/** The Wasm core: options, plans, allocator, formats, audit (for tools and tests). */
export declare const core: typeof CoreModule;

