// Instants → local dates in an IANA time zone, with the runtime's time-zone data (Intl): the
// package's answer to the core's `localDates` command (the core has no clock and no tz data),
// and the local dates the core's period windows ask for (sequence.js). One
// formatter per zone, made once: building an Intl.DateTimeFormat costs far more than using it.
import { invalidOption } from "./errors.js";

const formatters = new Map();

/**
 * The formatter of `timeZone`; an unknown zone (Intl throws RangeError) is INVALID_OPTION
 * naming `timeZone`, the check a host makes before any command (the core checks the syntax).
 */
export function zoneFormatter(timeZone) {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    try {
      formatter = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", era: "short" });
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      throw invalidOption("timeZone", `${JSON.stringify(timeZone)} is not a time zone this runtime knows (its Intl time-zone data): use an IANA name such as "Europe/Paris"`);
    }
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The local date (`YYYY-MM-DD`, proleptic Gregorian, astronomical year) of `ms` in the zone of `formatter`. */
export function localDate(formatter, ms) {
  let era, year, month, day;
  for (const part of formatter.formatToParts(ms)) {
    if (part.type === "era") era = part.value;
    else if (part.type === "year") year = Number(part.value);
    else if (part.type === "month") month = part.value;
    else if (part.type === "day") day = part.value;
  }
  // Intl counts years before 1 as "1 BC", "2 BC", …: year 0, −1, … (the core refuses them).
  if (era === "BC" || era === "B") year = 1 - year;
  return `${String(year).padStart(4, "0")}-${month}-${day}`;
}

/** The `localDates` command: the local date of each instant (ms since the epoch) in `timeZone`, in order. */
export function localDates(timeZone, instants) {
  const formatter = zoneFormatter(timeZone);
  return Array.from(instants, (ms) => localDate(formatter, Number(ms)));
}
