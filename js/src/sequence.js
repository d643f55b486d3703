// One sequence: numbers handed out by the core's `SeriesCounters` (which counter a call takes
// from — scope, period, date or now —, the counters, the one at hand; per counter the block,
// the callers waiting, the refill to run and when to refill ahead, the setNext rule). JS adds
// the async plumbing only: per counter handle, the promise of the refill in flight, which every
// waiting caller shares; the local dates the core asks for (Intl); and the driver I/O. Core
// calls are synchronous; the event loop is the lock.
import { runPlan } from "./run-plan.js";
import { toCoreInteger } from "./bson.js";
import { checkBoolean, checkCollection, checkKnownKeys, isDocument } from "./errors.js";
import { localDates, zoneFormatter } from "./local-dates.js";
import { core } from "./wasm.js";
import { afterThisTurn, hostname } from "./runtime.js";

const NEXT_OPTIONS = ["date"];
const PERIOD_OPTIONS = ["period"];
const VOID_OPTIONS = ["reason", "by", "collection", "field", "scope", ...PERIOD_OPTIONS];

/** A counter's core object (the series' counter of one handle) and the promise of its refill in flight. */
class Counter {
  constructor(blockCounter) {
    this.core = blockCounter;
    this.refilling = null;
  }
}

export class Sequence {
  #spec;
  /** The options the spec was made from, and the cold module's object made from them on first use (`#admin`). */
  #input;
  #adminSpec;
  #runner;
  /** The core's counters of this sequence and its routing; `#counters[handle]` their I/O. */
  #series;
  #counters = [];
  /** The zone whose local dates the core asks for (a sequence that resets). */
  #timeZone;
  /** Whether the core's warm path looks at the clock (a sequence that resets): else no reading. */
  #clocked;

  /** @internal Use `Sequences#sequence()`. */
  constructor(spec, input, counters, codec, ledger) {
    this.#spec = spec;
    this.#input = input;
    this.#runner = { counters, ledger, sequence: this, codec };
    this.options = Object.freeze(spec.options());
    this.name = this.options.name;
    // `timeZone` is in the normalized options exactly when the sequence resets.
    if (this.options.timeZone !== undefined) {
      zoneFormatter(this.options.timeZone); // an unknown zone: INVALID_OPTION naming timeZone
      this.#timeZone = this.options.timeZone;
    }
    this.#series = spec.seriesCounters();
    this.#clocked = this.#series.warmPathReadsNow();
  }

  /**
   * The counter `_id` for a scope document (optional for an unscoped sequence) in `period`
   * (required exactly when the sequence resets: `periodOf(date)` gives it).
   */
  counterId(scope, period) {
    return this.#spec.counterId(this.#scopeDocument(scope), period);
  }

  /** The period (`"2026"`, `"2026-05"`, `"2026-05-17"`) of `date` (a Date or ms; default now), or `undefined` when the sequence never resets. */
  periodOf(date) {
    const ms = date === undefined ? Date.now() : this.#instant(date);
    let step = this.#series.periodAt(ms);
    while (Array.isArray(step)) step = this.#series.localDates(localDates(this.#timeZone, step));
    return step;
  }

  /** The formatted id of `value` (`undefined` when the sequence has no `format`) in `period` (required when the sequence resets). */
  format(value, period) {
    return this.#spec.formatValue(toCoreInteger(value), period);
  }

  /**
   * The next number. One round trip per `block` numbers. A sequence that resets numbers in the
   * period of `date` (default now): `next({ date })` unscoped, `next(scope, { date })` scoped.
   */
  async next(first, second) {
    if (first === undefined && second === undefined) {
      // The warm path: one call into the core. NaN: a scoped sequence, now out of the period at
      // hand, the block dry, callers waiting, or a number that needs a BigInt.
      const value = this.#series.takeOneNow(this.#clocked ? Date.now() : 0);
      if (value === value) return value;
    }
    const counter = this.#counterOf(first, second);
    const value = counter.core.takeOne();
    if (value === value) return value;
    return (await this.#take(counter, 1))[0];
  }

  /**
   * The next number with its period and formatted id: `{ value, period, formatted }` (period
   * undefined when the sequence never resets, formatted without a `format`). Arguments as `next`.
   */
  async nextFormatted(first, second) {
    const counter = this.#counterOf(first, second);
    const period = this.#series.routedPeriod();
    const [value] = await this.#take(counter, 1);
    return { value, period, formatted: this.#spec.formatValue(value, period) };
  }

  /**
   * `count` numbers (0 to 1,000,000), in order, with at most one round trip (more only near a
   * bound). The count is checked before anything is taken, from the block or the server.
   * Scope and `{ date }` as for `next`.
   */
  async nextMany(count, first, second) {
    const checked = core.checkCount("count", count);
    return this.#take(this.#counterOf(first, second), checked);
  }

  /** The last number reserved on the server (by any process), or null; reserves nothing. `{ period }` for a sequence that resets. */
  async current(first, second) {
    const state = await this.state(first, second);
    return state.last;
  }

  /** The counter's state: `{ last, next }` (next is null when the sequence is exhausted). */
  async state(first, second) {
    const [scope, { period }] = this.#arguments(first, second, "state options", PERIOD_OPTIONS);
    return runPlan(this.#spec.current(this.counterId(scope, period)), this.#runner);
  }

  /**
   * Makes `next` the next number issued. Refuses to move backwards unless `force`.
   * Numbers this object still holds in a block are dropped (a gap).
   */
  async setNext(next, options) {
    const { force, scope, period } = checkKnownKeys("setNext options", options, ["force", "scope", ...PERIOD_OPTIONS]);
    const counterId = this.counterId(scope, period);
    const plan = this.#admin.setNext(counterId, toCoreInteger(next), checkBoolean("force", force));
    const outcome = await runPlan(plan, this.#runner);
    this.#series.discard(counterId);
    return outcome;
  }

  /**
   * Rewrites the counter's definition (the options it records beside its number, which
   * every reservation compares with its own — SEQUENCE_CONFLICT when they differ) to this
   * sequence's options, on purpose: after the options changed. The number is left as it is.
   * Refused (INVALID_ARGUMENT, nothing written) for a counter that does not exist. Resolves with
   * `{ counterId, previous, definition, changed }`: the definition before (null: none), now, and
   * the options that changed. `{ scope, period }` choose the counter.
   */
  async adoptDefinition(options) {
    const { scope, period } = checkKnownKeys("adoptDefinition options", options, ["scope", ...PERIOD_OPTIONS]);
    return runPlan(this.#admin.adoptDefinition(this.counterId(scope, period), undefined), this.#runner);
  }

  /**
   * Voids `numbers` (one integer or an array, up to 1,000) of the counter of `scope` and
   * `period`: records each in the ledger with `reason`, `by` (default this host's name) and
   * now, so it is never handed out again and an audit accounts for it. `collection` (the
   * driver Collection whose documents hold the numbers) and `field` (default `_id`) are
   * required so a number a document holds is refused: NUMBER_HELD. Also refused, nothing
   * written: a number the counter has not issued (NUMBER_NOT_ISSUED), one voided or recorded
   * as deleted already (ALREADY_VOIDED), while a sidecar's gapless intent is pending on the
   * counter (INTENT_PENDING), a blank reason, a number off the grid. Resolves with
   * `{ counterId, numbers, atMs }`.
   */
  async void(numbers, options) {
    const { reason, by = hostname(), collection, field = "_id", scope, period } = checkKnownKeys("void options", options, VOID_OPTIONS);
    checkCollection(collection, ["find"]);
    const list = Array.isArray(numbers) ? numbers : [numbers];
    const request = { counterId: this.counterId(scope, period), numbers: list.map(toCoreInteger), field, reason, by, nowMs: Date.now() };
    return runPlan(this.#admin.voidNumbers(request), { ...this.#runner, documents: collection });
  }

  /**
   * Every counter of the sequence — unscoped and each scope — back to `start` (what
   * mongoose-sequence's `counterReset(id)` does without a reference): for a collection whose
   * documents were removed. Refused (REWIND_REFUSED, nothing written) for counters a mongo-seq
   * sidecar keeps, which may number gaplessly, unless `force`. Numbers this object holds in a
   * block are dropped. Resolves with `{ rewound, next }`: how many counters were set back.
   */
  async rewindAll(options) {
    return this.#rewind(options, false);
  }

  /**
   * @internal `rewindAll` of a sequence named as one that exists: one without any counter is
   * INVALID_ARGUMENT, nothing written (the mongoose plugin's `rewindSequence`, mongoose-sequence's
   * `counterReset('wrong')` refused).
   */
  async rewindExisting(options) {
    return this.#rewind(options, true);
  }

  async #rewind(options, existing) {
    const { force } = checkKnownKeys("rewindAll options", options, ["force"]);
    const outcome = await runPlan(this.#admin.rewindAll(checkBoolean("force", force), undefined, existing), this.#runner);
    this.#series.discardAll();
    return outcome;
  }

  /**
   * Verifies every series of this sealed sequence (its `sealFields`) as stored: the documents
   * of `collection` (the driver Collection a mongo-seq sidecar's gapless trigger numbers) holding
   * numbers in `field`, the ledger and the counters, each chain re-computed. Resolves with one
   * report per series (counter), by counter id: `{ series, links, first, last, verified,
   * failures, pending, beforeSealing }`, `failures` by number, the first one the first link that
   * does not verify (FIELD_CHANGED, LINK_MISSING, LINK_INSERTED, OUT_OF_ORDER, SEAL_REMOVED).
   * Reads only. INVALID_ARGUMENT naming `sealFields` for a sequence that seals nothing.
   */
  async verifySeal(options) {
    const { collection, field } = checkKnownKeys("verifySeal options", options, ["collection", "field"]);
    checkCollection(collection, ["find"]);
    return runPlan(this.#admin.verifySeal(field), { ...this.#runner, documents: collection });
  }

  /**
   * Moves the counter past existing numbers (imports), never backwards:
   * `seedFromMax(collection, field = "_id", { scope })` past the largest number stored there
   * (among documents with the `scope` document's values), or `seedFromMax(value, { scope })`. Resolves with the counter
   * state afterwards (`{ last, next }`).
   */
  async seedFromMax(source, ...rest) {
    if (typeof source?.findOne === "function") {
      const [field = "_id", options] = rest;
      const { scope } = checkKnownKeys("seedFromMax options", options, ["scope"]);
      const plan = this.#admin.seedFromCollection(field, this.#scopeDocument(scope));
      return runPlan(plan, { ...this.#runner, documents: source });
    }
    const { scope, period } = checkKnownKeys("seedFromMax options", rest[0], ["scope", ...PERIOD_OPTIONS]);
    const plan = this.#admin.seedFromMax(this.counterId(scope, period), toCoreInteger(source));
    return runPlan(plan, this.#runner);
  }

  /**
   * @internal Refuses (GAPLESS_REFUSED, nothing written) a sequence whose counters a mongo-seq
   * sidecar keeps — a pending gapless intent, a definition that records `gapless`, a lease
   * `epoch`: the core's rule, the one `rewindAll` applies — before a number is taken on purpose
   * outside the sidecar's numbering (the mongoose plugin's `doc.setNext()`).
   */
  async checkNotKept() {
    return runPlan(this.#admin.checkNotKept(), this.#runner);
  }

  /** @internal `count` numbers of the counter `counterId` (the `take` command of insert plans). */
  takeNumbers(counterId, count) {
    return this.#take(this.#counter(this.#series.counterOf(counterId)), count);
  }

  /** @internal The core's spec, for `Sequences` (inserts). */
  get spec() {
    return this.#spec;
  }

  /**
   * @internal The sequence's admin plans (assign, void, setNext, adopt, rewind, seals, seeds):
   * the cold module's own object, made from the same options on first use (loading that module).
   */
  get admin() {
    return this.#admin;
  }

  get #admin() {
    return (this.#adminSpec ??= new core.SequenceAdmin(this.#input));
  }

  /** Numbers now, or a ticket and the wait for it. */
  async #take(counter, count) {
    const taken = counter.core.take(count);
    if (typeof taken === "number") return this.#wait(counter, taken);
    this.#refillAhead(counter);
    return taken;
  }

  /**
   * Starts the refill ahead the core gives (option `refillAhead`), in the background. Nobody
   * waits on it but callers that find the block dry meanwhile; if it fails, the next of them
   * runs a refill of its own and gets the error.
   */
  #refillAhead(counter) {
    const plan = counter.core.refillAhead(Date.now());
    if (plan !== undefined) this.#run(counter, plan).catch(() => {});
  }

  /** Runs a refill (its range goes to the counter); the promise waiters share while it runs. */
  #run(counter, plan) {
    const refill = runPlan(plan, this.#runner, { output: false }).finally(() => {
      if (counter.refilling === refill) counter.refilling = null;
    });
    counter.refilling = refill;
    return refill;
  }

  /**
   * Waits with `ticket` until the core hands over its numbers: runs the refill when the core
   * gives it one (its failure is this caller's), else waits for the refill in flight (if that
   * one fails, the core gives this caller a refill of its own).
   */
  async #wait(counter, ticket) {
    // Callers that run in this turn of the event loop queue first: one refill serves them all.
    await afterThisTurn();
    for (;;) {
      const values = counter.core.ready(ticket);
      if (values !== undefined) {
        this.#refillAhead(counter);
        return values;
      }
      // The clock lets the core grow the block under load (option `maxBlock`).
      const plan = counter.core.refill(ticket, Date.now());
      if (plan !== undefined) await this.#run(counter, plan);
      else await counter.refilling?.catch(() => {});
    }
  }

  /** The counter of `handle` (the core's), its I/O slot made on first use. */
  #counter(handle) {
    return (this.#counters[handle] ??= new Counter(this.#series.counter(handle)));
  }

  /** A scope argument as the core reads it: a document, or undefined. */
  #scopeDocument(scope) {
    return scope === undefined || scope === null ? undefined : this.#runner.codec.documentArgument("scope", scope);
  }

  /**
   * The scope and options of a call that takes both (`next`, `nextMany`, `state`): for a
   * scoped sequence `(scope, options)`; for an unscoped one `(options)` (or `(undefined, options)`).
   */
  #arguments(first, second, what, known) {
    const unscopedOptions = this.options.scope.length === 0 && second === undefined && isDocument(first);
    const [scope, options] = unscopedOptions ? [undefined, first] : [first, second];
    return [scope, checkKnownKeys(what, options, known)];
  }

  /** A `date` option as ms since the epoch, checked by the core (INVALID_ARGUMENT, INVALID_DATE naming `date`). */
  #instant(date) {
    return core.checkInstant("date", date instanceof Date ? date.getTime() : date);
  }

  /** The counter a `next`/`nextMany` call takes from (the core's choice; its period: `routedPeriod()`). */
  #counterOf(first, second) {
    const [scope, { date }] = this.#arguments(first, second, "next options", NEXT_OPTIONS);
    const ms = date === undefined ? undefined : this.#instant(date);
    let step = this.#series.route(this.#scopeDocument(scope), ms, Date.now());
    while (typeof step !== "number") step = this.#series.localDates(localDates(this.#timeZone, step));
    return this.#counter(step);
  }
}
