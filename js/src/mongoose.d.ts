// Type declarations of `mongo-seq/mongoose` (ESM and CJS entries share them).
import type { Schema } from "mongoose";
import type { CounterState, Integer, Sequence, SequenceNumber, SequenceOptions, SetNextOutcome, ScopeDocument } from "./index.js";

/** Options of `schema.plugin(sequencePlugin, options)`: where the number goes, and the sequence's options. */
export interface SequencePluginOptions extends SequenceOptions {
  /** Path that receives the number (declared as a Number when the schema lacks it). */
  field: string;
  /** Sequence name (default `<collection>.<field>`); models naming the same sequence share its counter. */
  sequence?: string;
  /** Path that receives the formatted id (needs `format`; declared as a String when the schema lacks it). */
  formatField?: string;
  /** Counters collection (default "counters"). */
  counters?: string;
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
  /** Moves the counter past the largest number in the model's collection (never backwards). */
  seedFromMax(options?: { field?: string; scope?: ScopeDocument }): Promise<CounterState>;
}
