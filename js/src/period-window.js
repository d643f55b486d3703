// The warm-path cache of a sequence that resets: the period of the instants between `from` and
// `until` (ms since the epoch), so a `next()` inside that window asks neither Intl nor the core.
// The core says where periods begin as local dates (`periodStart`, `nextPeriodStart`); the
// instant a local date begins in the sequence's zone is found here by a search over Intl, since
// local midnight may not exist (a daylight-saving change at midnight) and offsets of the past
// (local mean time) are odd.
import { localDate, zoneFormatter } from "./local-dates.js";

const HOUR_MS = 3_600_000;
/** Every zone's offset, local mean times included, is within ±16 h: 36 h either side of UTC midnight brackets a date's start. */
const MARGIN_MS = 36 * HOUR_MS;

/** Windows kept besides the current one: callers that alternate between a few periods (now, and dates of last year) search Intl once per period. */
const KEPT = 4;

export class PeriodWindow {
  #spec;
  #formatter;
  /** Earlier windows, most recent first. */
  #kept = [];
  /** The current window: the period and the instants it spans, [from, until). */
  period = undefined;
  from = 0;
  until = -Infinity;

  /** `spec`: the core's SequenceSpec of a sequence that resets in `timeZone` (an existing zone). */
  constructor(spec, timeZone) {
    this.#spec = spec;
    this.#formatter = zoneFormatter(timeZone);
  }

  /** The period of `ms` (an instant the core accepts): from a cached window, or worked out and cached. */
  periodAt(ms) {
    if (ms >= this.from && ms < this.until) return this.period;
    let window = this.#kept.find((kept) => ms >= kept.from && ms < kept.until);
    if (window === undefined) {
      const period = this.#spec.periodOf(localDate(this.#formatter, ms));
      const start = this.#spec.periodStart(period);
      const next = this.#spec.nextPeriodStart(period);
      window = { period, from: start === undefined ? -Infinity : this.#startOf(start), until: next === undefined ? Infinity : this.#startOf(next) };
      // Cached only when the search agrees with the instant at hand (a zone whose dates step
      // back at a boundary keeps no window; each call then asks Intl).
      if (!(window.from <= ms && ms < window.until)) return period;
    }
    if (this.period !== undefined) this.#kept = [{ period: this.period, from: this.from, until: this.until }, ...this.#kept.filter((kept) => kept !== window)].slice(0, KEPT);
    ({ period: this.period, from: this.from, until: this.until } = window);
    return window.period;
  }

  /** The local date of `ms` (for the core's `localDates`, and tests). */
  localDate(ms) {
    return localDate(this.#formatter, ms);
  }

  /** The first instant whose local date is `date` or later (`YYYY-MM-DD`); NaN when the search finds no bracket. */
  #startOf(date) {
    const [year, month, day] = date.split("-").map(Number);
    const midnight = new Date(0);
    midnight.setUTCFullYear(year, month - 1, day);
    let low = midnight.getTime() - MARGIN_MS; // local date before `date`
    let high = midnight.getTime() + MARGIN_MS; // local date `date` or later
    if (!(this.localDate(low) < date) || this.localDate(high) < date) return NaN;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (this.localDate(middle) < date) low = middle;
      else high = middle;
    }
    return high;
  }
}
