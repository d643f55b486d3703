// Type declarations of `mongo-seq/mongoose` (ESM and CJS entries share them).
import type { Model, Schema } from "mongoose";
import type { AdoptOutcome, AssignOutcome, CounterState, Integer, RewindOutcome, Sequence, SequenceNumber, SequenceOptions, SetNextOutcome, ScopeDocument, VoidOutcome } from "./index.js";

/** Options of `schema.plugin(sequencePlugin, options)`: where the number goes, and the sequence's options. */
export interface SequencePluginOptions extends SequenceOptions {
  /**
   * Path that receives the number, nested paths too (`parent.nested`, a single sub-document's
   * field); declared as a Number when the schema lacks it. A Number field bounds the sequence at
   * 2^53 − 1 (declare `Schema.Types.BigInt` to go past it).
   */
  field: string;
  /**
   * Sequence name (default `<collection>.<field>`, `<collection>.<path>.<field>` for a
   * sub-document schema), or a function of the model's name and the model returning it (one
   * plugin call shared by several models or discriminators; typegoose's `overwriteModelName`
   * takes the same arguments); models naming the same sequence share its counter.
   */
  sequence?: string | ((modelName: string, model: Model<any>) => string);
  /** Path that receives the formatted id (needs `format`; declared as a String when the schema lacks it). */
  formatField?: string;
  /** Counters collection (default "counters"). */
  counters?: string;
  /**
   * Number a document only once it matches: field equalities (`{ status: "issued" }`: strings,
   * numbers, booleans, null) or a function of the document. A new document is numbered in its
   * insert when it matches; a stored one by the save() that makes it match, with a write
   * conditioned on it still matching (equalities) and unnumbered. Never renumbered.
   */
  when?: Record<string, string | number | boolean | null> | ((doc: any) => boolean);
  /** A sequence that resets: the document's Date path whose period it is numbered in (default now). */
  dateField?: string;
  /**
   * Start after the largest number already in the model's collection (@typegoose/auto-increment's
   * start): before a counter's first number in a process, the counter is moved past the largest
   * number of `field` (among the documents of its scope), never backwards. Not with `reset`.
   */
  seedFromMax?: boolean;
}

/** Numbers new documents of `schema` on save(), create(), insertMany() and bulkWrite() insertOne. */
export declare function sequencePlugin(schema: Schema<any, any, any, any, any, any, any>, options: SequencePluginOptions): void;

/** The statics a schema gets from the plugin (`field` picks one when the model numbers several). */
export interface SequenceStatics {
  /** The package's Sequence behind a numbered field. */
  sequence(field?: string): Sequence;
  /** Makes `next` the next number issued; refuses to move backwards unless `force`. */
  setNext(next: Integer, options?: { field?: string; scope?: ScopeDocument; force?: boolean }): Promise<SetNextOutcome>;
  /** The last number reserved (null: no counter yet). */
  current(options?: { field?: string; scope?: ScopeDocument }): Promise<SequenceNumber | null>;
  /** Rewrites the counter's recorded definition to the field's sequence options on purpose (SEQUENCE_CONFLICT otherwise); INVALID_ARGUMENT for a counter that does not exist. */
  adoptDefinition(options?: { field?: string; scope?: ScopeDocument }): Promise<AdoptOutcome>;
  /** Every counter of the sequence (each scope) back to `start` (mongoose-sequence's `counterReset(id)`); REWIND_REFUSED for counters a sidecar keeps unless `force`. */
  rewindAll(options?: { field?: string; force?: boolean }): Promise<RewindOutcome>;
  /**
   * mongoose-sequence's `counterReset(id)`: every counter of an existing sequence of the model
   * (the field's, or the one named) back to `start`. INVALID_ARGUMENT, nothing written, for a
   * name none of the model's sequences has or a sequence without any counter; REWIND_REFUSED for
   * counters a sidecar keeps unless `force`.
   */
  rewindSequence(options?: { field?: string; force?: boolean }): Promise<RewindOutcome>;
  rewindSequence(name: string, options?: { force?: boolean }): Promise<RewindOutcome>;
  /** Numbers the stored documents that match `when` (and `filter`) and have no number (the package's `assign`). */
  assignNumbers(options?: { field?: string; filter?: Record<string, unknown>; sort?: Record<string, 1 | -1> }): Promise<AssignOutcome>;
  /** Moves the counter past the largest number in the model's collection (never backwards). */
  seedFromMax(options?: { field?: string; scope?: ScopeDocument }): Promise<CounterState>;
  /** Voids issued numbers none of the model's documents holds, with a reason, in the ledger (the package's `Sequence#void`). */
  voidNumber(numbers: Integer | Integer[], options: { reason: string; by?: string; field?: string; scope?: ScopeDocument; period?: string }): Promise<VoidOutcome>;
}

/**
 * The document method a numbered schema gets (mongoose-sequence's `doc.setNext(id)`): numbers
 * this document, which has no number yet, with the next number of the field's sequence (or of
 * the sequence named), whether or not it matches `when`; a stored document is written at once,
 * with a write conditioned on it still having no number. Resolves with the number.
 * INVALID_ARGUMENT, nothing reserved: the document has a number; a name none of the model's
 * sequences has. GAPLESS_REFUSED, nothing reserved, unless `force`: a sequence whose counters a
 * mongo-seq sidecar keeps (a pending gapless intent, a definition recording `gapless`, a lease
 * `epoch`).
 */
export interface SequenceMethods {
  setNext(options?: { field?: string; force?: boolean }): Promise<SequenceNumber>;
  setNext(name: string, options?: { force?: boolean }): Promise<SequenceNumber>;
}
