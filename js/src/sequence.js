// One sequence: numbers handed out from blocks the core's allocator holds, refilled by the
// core's reservation plan. JS adds only the async plumbing: one refill in flight per counter,
// shared by every caller waiting for it, so concurrent calls neither reserve twice needlessly
// nor hand out a number twice (allocator calls are synchronous; the event loop is the lock).
import { core } from "./wasm.js";
import { runPlan } from "./run-plan.js";
import { documentArgument, toCoreInteger } from "./bson.js";
import { checkBoolean, checkKnownKeys } from "./errors.js";

/** Per counter id: the allocator, the refill in flight, and a generation that setNext bumps. */
class CounterState {
  constructor(block) {
    this.allocator = new core.BlockAllocator(block);
    this.refilling = null;
    this.generation = 0;
  }
}

export class Sequence {
  #spec;
  #counters;
  #states = new Map();

  /** @internal Use `Sequences#sequence()`. */
  constructor(spec, counters) {
    this.#spec = spec;
    this.#counters = counters;
    this.options = Object.freeze(spec.options());
    this.name = this.options.name;
  }

  /** The counter `_id` for a scope document (optional for an unscoped sequence). */
  counterId(scope) {
    return this.#spec.counterId(scopeDocument(scope));
  }

  /** The formatted id of `value` (`undefined` when the sequence has no `format`). */
  format(value) {
    return this.#spec.formatValue(toCoreInteger(value));
  }

  /** The next number. One round trip per `block` numbers. */
  async next(scope) {
    const [value] = await this.#take(1, this.counterId(scope));
    return value;
  }

  /**
   * `count` numbers (0 to 1,000,000), in order, with at most one round trip (more only near a
   * bound). The count is checked before anything is taken, from the block or the server.
   */
  async nextMany(count, scope) {
    return this.#take(core.checkCount("count", count), this.counterId(scope));
  }

  /** The last number reserved on the server (by any process), or null; reserves nothing. */
  async current(scope) {
    const state = await runPlan(this.#spec.current(this.counterId(scope)), { counters: this.#counters });
    return state.last;
  }

  /** The counter's state: `{ last, next }` (next is null when the sequence is exhausted). */
  async state(scope) {
    return runPlan(this.#spec.current(this.counterId(scope)), { counters: this.#counters });
  }

  /**
   * Makes `next` the next number issued. Refuses to move backwards unless `force`.
   * Numbers this object still holds in a block are dropped (a gap).
   */
  async setNext(next, options) {
    const { force, scope } = checkKnownKeys("setNext options", options, ["force", "scope"]);
    const counterId = this.counterId(scope);
    const plan = this.#spec.setNext(counterId, toCoreInteger(next), checkBoolean("force", force));
    const outcome = await runPlan(plan, { counters: this.#counters });
    this.#discard(counterId);
    return outcome;
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
      const plan = this.#spec.seedFromCollection(field, scopeDocument(scope));
      return runPlan(plan, { counters: this.#counters, documents: source });
    }
    const { scope } = checkKnownKeys("seedFromMax options", rest[0], ["scope"]);
    const plan = this.#spec.seedFromMax(this.counterId(scope), toCoreInteger(source));
    return runPlan(plan, { counters: this.#counters });
  }

  /** Takes `count` numbers for one counter, refilling from the server when the block is dry. */
  async #take(count, counterId) {
    const state = this.#state(counterId);
    let values = [];
    while (values.length < count) {
      const range = state.allocator.take(count - values.length);
      if (range !== undefined) {
        // No push(...taken): spreading a large array overflows the call stack.
        const taken = core.rangeValues(range);
        if (values.length === 0) values = taken;
        else for (const value of taken) values.push(value);
        continue;
      }
      if (state.refilling === null) {
        const own = this.#refill(state, counterId, count - values.length).finally(() => {
          state.refilling = null;
        });
        state.refilling = own;
        await own;
      } else {
        // Another caller's refill; if it fails (e.g. it wanted more than is left before the
        // bound), this caller tries its own refill for what it needs.
        await state.refilling.catch(() => {});
      }
    }
    return values;
  }

  async #refill(state, counterId, wanted) {
    const generation = state.generation;
    // The caller needs `wanted` numbers: a shorter range near the bound would only be dropped
    // when the call fails, so ask for all of them (the core's default accepts any tail).
    const request = { ...state.allocator.refillRequest(counterId, wanted), minCount: wanted };
    const range = await runPlan(this.#spec.reserve(request), { counters: this.#counters });
    // A setNext during the round trip invalidated this block: drop it (a gap, never a repeat).
    if (generation === state.generation) state.allocator.refill(range);
  }

  #state(counterId) {
    let state = this.#states.get(counterId);
    if (state === undefined) {
      state = new CounterState(Number(this.options.block));
      this.#states.set(counterId, state);
    }
    return state;
  }

  #discard(counterId) {
    const state = this.#states.get(counterId);
    if (state === undefined) return;
    state.allocator.discard();
    state.generation += 1;
  }

  /** @internal The core's spec, for `Sequences` (inserts). */
  get spec() {
    return this.#spec;
  }
}

/** A scope argument as the core reads it: a document, or undefined. */
function scopeDocument(scope) {
  return scope === undefined || scope === null ? undefined : documentArgument("scope", scope);
}
