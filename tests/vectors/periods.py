#!/usr/bin/env python3
"""Writes and checks tests/vectors/periods.json: periodic series, instant -> local date ->
period -> counter id -> formatted id, with an oracle independent of the core.

The expected values come from Python's zoneinfo (the IANA tz database as the system ships it)
for instant -> local date, and from the plain rules below (written apart from the Rust code) for
the rest. `node` (ICU's tz data, what the npm package's Intl uses) is a second oracle for the
local dates when it is on PATH.

    python3 tests/vectors/periods.py           # check the committed file (exit 1 on a mismatch)
    python3 tests/vectors/periods.py --write   # regenerate it from CASES below

Zones are chosen for rules that are stable (no change announced), so every host's tz database
(zoneinfo, ICU, jiff's bundled copy) gives the same answers.
"""
import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

FILE = Path(__file__).with_name("periods.json")
NAME = "inv"
MIN_INSTANT_MS = -62_135_510_400_000  # 0001-01-02T00:00:00Z
MAX_INSTANT_MS = 253_402_127_999_999  # 9999-12-29T23:59:59.999Z
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def ms(text):
    """Milliseconds since the epoch of an ISO UTC date-time (Z)."""
    when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    delta = when - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


YEARLY = "INV-{yyyy}-{seq:06}"
MONTHLY = "T{yy}{mm}-{seq:04}"
DAILY = "{yyyy}{mm}{dd}/{seq}"

# (name, instant (ISO Z, or ms), timeZone, reset, yearStart, format, scope document, localDate
# when there is no instant)
CASES = [
    # The turn of the year where it comes first and late.
    ("auckland/new-year/last-ms-of-2025", "2025-12-31T10:59:59.999Z", "Pacific/Auckland", "yearly", None, YEARLY, None),
    ("auckland/new-year/first-ms-of-2026", "2025-12-31T11:00:00.000Z", "Pacific/Auckland", "yearly", None, YEARLY, None),
    ("auckland/new-year/utc-still-2025", "2025-12-31T23:00:00.000Z", "Pacific/Auckland", "yearly", None, YEARLY, {"tenantId": "acme"}),
    ("los-angeles/new-year/last-ms-of-2025", "2026-01-01T07:59:59.999Z", "America/Los_Angeles", "yearly", None, YEARLY, None),
    ("los-angeles/new-year/first-ms-of-2026", "2026-01-01T08:00:00.000Z", "America/Los_Angeles", "yearly", None, YEARLY, {"tenantId": "acme"}),
    ("los-angeles/new-year/utc-already-2026", "2026-01-01T02:00:00.000Z", "America/Los_Angeles", "monthly", None, MONTHLY, None),
    # Daylight-saving days, both directions, both zones: the transition itself and the
    # midnights around the day (a daily series), and the turn of the month (monthly).
    ("los-angeles/dst-start/before-midnight", "2026-03-08T07:59:59.999Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-start/midnight", "2026-03-08T08:00:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-start/before-the-jump", "2026-03-08T09:59:59.999Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-start/after-the-jump", "2026-03-08T10:00:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-start/last-ms-of-the-day", "2026-03-09T06:59:59.999Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-start/next-day", "2026-03-09T07:00:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-end/last-ms-of-october", "2026-11-01T06:59:59.999Z", "America/Los_Angeles", "monthly", None, MONTHLY, None),
    ("los-angeles/dst-end/november", "2026-11-01T07:00:00.000Z", "America/Los_Angeles", "monthly", None, MONTHLY, None),
    ("los-angeles/dst-end/first-1am", "2026-11-01T08:30:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-end/second-1am", "2026-11-01T09:30:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-end/last-ms-of-the-day", "2026-11-02T07:59:59.999Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("los-angeles/dst-end/next-day", "2026-11-02T08:00:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    ("auckland/dst-end/before-midnight", "2026-04-04T10:59:59.999Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-end/midnight", "2026-04-04T11:00:00.000Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-end/first-2am", "2026-04-04T13:30:00.000Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-end/second-2am", "2026-04-04T14:30:00.000Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-end/last-ms-of-the-day", "2026-04-05T11:59:59.999Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-end/next-day", "2026-04-05T12:00:00.000Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-start/before-the-jump", "2026-09-26T13:59:59.999Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-start/after-the-jump", "2026-09-26T14:00:00.000Z", "Pacific/Auckland", "daily", None, DAILY, None),
    ("auckland/dst-start/last-ms-of-september", "2026-09-30T10:59:59.999Z", "Pacific/Auckland", "monthly", None, MONTHLY, None),
    ("auckland/dst-start/october", "2026-09-30T11:00:00.000Z", "Pacific/Auckland", "monthly", None, MONTHLY, None),
    ("paris/new-year-eve/last-ms-of-2025", "2025-12-31T22:59:59.999Z", "Europe/Paris", "yearly", None, YEARLY, None),
    ("paris/new-year-eve/first-ms-of-2026", "2025-12-31T23:00:00.000Z", "Europe/Paris", "yearly", None, YEARLY, None),
    # A fiscal year's turn: the year is named after the calendar year it ends in.
    ("london/fiscal-april/last-ms-of-fy2026", "2026-03-31T22:59:59.999Z", "Europe/London", "yearly", 4, YEARLY, None),
    ("london/fiscal-april/first-ms-of-fy2027", "2026-03-31T23:00:00.000Z", "Europe/London", "yearly", 4, YEARLY, {"tenantId": "acme"}),
    ("london/fiscal-april/new-year-same-fy", "2027-01-01T00:00:00.000Z", "Europe/London", "yearly", 4, YEARLY, None),
    ("sydney/fiscal-july/last-ms-of-fy2026", "2026-06-30T13:59:59.999Z", "Australia/Sydney", "yearly", 7, YEARLY, None),
    ("sydney/fiscal-july/first-ms-of-fy2027", "2026-06-30T14:00:00.000Z", "Australia/Sydney", "yearly", 7, YEARLY, None),
    ("sydney/fiscal-july/utc-still-june", "2026-06-30T20:00:00.000Z", "Australia/Sydney", "yearly", 7, "FY{yy}-{seq:05}", None),
    # Before 1970 (negative milliseconds), local mean time included.
    ("utc/before-1970/last-ms-of-1969", "1969-12-31T23:59:59.999Z", "UTC", "yearly", None, YEARLY, None),
    ("utc/epoch", "1970-01-01T00:00:00.000Z", "UTC", "daily", None, DAILY, None),
    ("paris/1900/lmt-still-1899", "1899-12-31T23:50:38.999Z", "Europe/Paris", "yearly", None, YEARLY, None),
    ("paris/1900/lmt-already-1900", "1899-12-31T23:50:39.000Z", "Europe/Paris", "yearly", None, YEARLY, None),
    ("los-angeles/1950/new-year", "1950-01-01T08:00:00.000Z", "America/Los_Angeles", "monthly", None, MONTHLY, None),
    # After 2100.
    ("auckland/2101/last-ms-of-2100", "2100-12-31T10:59:59.999Z", "Pacific/Auckland", "yearly", None, YEARLY, None),
    ("auckland/2101/first-ms-of-2101", "2100-12-31T11:00:00.000Z", "Pacific/Auckland", "yearly", None, "{yy}-{seq}", None),
    ("los-angeles/2104/leap-day", "2104-02-29T12:00:00.000Z", "America/Los_Angeles", "daily", None, DAILY, None),
    # The edges of the years a period can have.
    ("utc/year-1/first-instant", MIN_INSTANT_MS, "UTC", "yearly", None, YEARLY, None),
    ("los-angeles/year-1/lmt", MIN_INSTANT_MS, "America/Los_Angeles", "daily", None, DAILY, None),
    ("kiritimati/year-9999/last-instant", MAX_INSTANT_MS, "Pacific/Kiritimati", "yearly", None, YEARLY, None),
    ("utc/year-9999/last-date", None, "UTC", "daily", None, DAILY, None, "9999-12-31"),
    ("utc/year-9999/last-year", None, "UTC", "yearly", None, YEARLY, None, "9999-12-31"),
    ("utc/year-1/first-date", None, "UTC", "monthly", None, MONTHLY, None, "0001-01-01"),
    ("utc/fiscal/last-fiscal-year", None, "UTC", "yearly", 4, YEARLY, None, "9999-03-31"),
    ("utc/fiscal/first-fiscal-year-starts-before-year-1", None, "UTC", "yearly", 7, YEARLY, None, "0001-01-01"),
]

# Refusals: (name, instant or None, timeZone, reset, yearStart, localDate when no instant,
# stage): `instant` (the core refuses the instant before any host converts it) or `period`
# (the local date has no period of years 1..=9999).
ERRORS = [
    ("refused/instant-before-year-1", MIN_INSTANT_MS - 1, "UTC", "yearly", None, None, "instant"),
    ("refused/instant-after-9999-12-29", MAX_INSTANT_MS + 1, "Pacific/Kiritimati", "yearly", None, None, "instant"),
    ("refused/fiscal-year-10000", MAX_INSTANT_MS, "UTC", "yearly", 4, None, "period"),
    ("refused/fiscal-year-10000-from-a-date", None, "UTC", "yearly", 7, "9999-07-01", "period"),
]


def local_date(instant_ms, zone):
    when = EPOCH + dt.timedelta(milliseconds=instant_ms)
    return when.astimezone(ZoneInfo(zone)).date().isoformat()


def period(date, reset, year_start):
    year, month, day = (int(part) for part in date.split("-"))
    if reset == "yearly":
        fiscal = year + 1 if year_start > 1 and month >= year_start else year
        return None if fiscal > 9999 else f"{fiscal:04d}"
    if reset == "monthly":
        return f"{year:04d}-{month:02d}"
    return f"{year:04d}-{month:02d}-{day:02d}"


def first_date(text, reset, year_start):
    """The first local date of the period `text` (None: before 0001-01-01)."""
    parts = [int(part) for part in text.split("-")]
    if reset == "yearly":
        year = parts[0] - 1 if year_start > 1 else parts[0]
        return None if year < 1 else f"{year:04d}-{year_start:02d}-01"
    if reset == "monthly":
        return f"{parts[0]:04d}-{parts[1]:02d}-01"
    return text


def next_start(text, reset, year_start):
    parts = [int(part) for part in text.split("-")]
    if reset == "yearly":
        year = parts[0] if year_start > 1 else parts[0] + 1
        return None if year > 9999 else f"{year:04d}-{year_start:02d}-01"
    if reset == "monthly":
        year, month = parts
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        return None if year > 9999 else f"{year:04d}-{month:02d}-01"
    try:
        return (dt.date(*parts) + dt.timedelta(days=1)).isoformat()
    except OverflowError:
        return None


def first_instant(date, zone, past):
    """The first instant whose local date in `zone` is `date` or later (None: none; `past`, the
    instant the window runs to then). zoneinfo's midnight (its first occurrence; in a gap, the
    instant the gap ends), checked against the dates on either side; a bisection otherwise."""
    if date is None:
        return past
    day = dt.date.fromisoformat(date)

    def on_or_after(instant):
        return local_date(instant, zone) >= date

    try:
        midnight = dt.datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(zone))
        candidate = ms(midnight.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z"))
    except (OverflowError, ValueError):
        candidate = None
    low, high = MIN_INSTANT_MS, MAX_INSTANT_MS
    if on_or_after(low):
        return MIN_INSTANT_MS
    if not on_or_after(high):
        return MAX_INSTANT_MS + 1
    if candidate is not None and low < candidate <= high and on_or_after(candidate) and not on_or_after(candidate - 1):
        return candidate
    while high - low > 1:
        middle = (low + high) // 2
        if on_or_after(middle):
            high = middle
        else:
            low = middle
    return high


def formatted(template, value, text):
    year = text[:4]
    out = template.replace("{yyyy}", year).replace("{yy}", year[2:])
    if len(text) >= 7:
        out = out.replace("{mm}", text[5:7])
    if len(text) == 10:
        out = out.replace("{dd}", text[8:10])
    for width in range(20, 0, -1):
        out = out.replace("{seq:0%d}" % width, str(value).zfill(width))
    return out.replace("{seq}", str(value))


def options(case):
    result = {"name": NAME, "reset": case["reset"], "timeZone": case["timeZone"]}
    if case.get("yearStart") is not None:
        result["yearStart"] = case["yearStart"]
    if "format" in case:
        result["format"] = case["format"]
    if "document" in case:
        result["scope"] = sorted(case["document"])
    return result


def expected(case):
    """The outputs of a case, from its inputs."""
    out = {}
    if "instant" in case:
        instant = int(case["instant"])
        if not MIN_INSTANT_MS <= instant <= MAX_INSTANT_MS:
            return {"error": {"code": "INVALID_DATE", "stage": "instant"}}
        out["localDate"] = local_date(instant, case["timeZone"])
    date = out.get("localDate", case.get("localDate"))
    year_start = case.get("yearStart") or 1
    found = period(date, case["reset"], year_start)
    if found is None:
        return {**out, "error": {"code": "INVALID_DATE", "stage": "period"}}
    out["period"] = found
    scope = "".join(f"/{field}={value}" for field, value in sorted(case.get("document", {}).items()))
    out["counterId"] = f"{NAME}{scope}/{found}"
    out["nextPeriodStart"] = next_start(found, case["reset"], year_start)
    if "instant" in case:
        start = first_date(found, case["reset"], year_start)
        out["window"] = {
            "from": str(first_instant(start, case["timeZone"], MIN_INSTANT_MS)),
            "until": str(first_instant(out["nextPeriodStart"], case["timeZone"], MAX_INSTANT_MS + 1)),
        }
    if "format" in case:
        out["formatted"] = formatted(case["format"], case["value"], found)
    return out


def inputs():
    cases = []
    for entry in CASES:
        name, instant, zone, reset, year_start, template, document = entry[:7]
        case = {"name": name}
        if instant is not None:
            case["instant"] = str(instant if isinstance(instant, int) else ms(instant))
        else:
            case["localDate"] = entry[7]
        case.update({"timeZone": zone, "reset": reset})
        if year_start is not None:
            case["yearStart"] = year_start
        if document is not None:
            case["document"] = document
        case["format"] = template
        case["value"] = 1 + len(cases) % 7
        cases.append(case)
    for name, instant, zone, reset, year_start, date, _stage in ERRORS:
        case = {"name": name}
        if instant is not None:
            case["instant"] = str(instant)
        else:
            case["localDate"] = date
        case.update({"timeZone": zone, "reset": reset})
        if year_start is not None:
            case["yearStart"] = year_start
        cases.append(case)
    return cases


INPUT_KEYS = ("name", "instant", "timeZone", "reset", "yearStart", "document", "format", "value")


def build():
    cases = []
    for case in inputs():
        cases.append({**case, **expected(case)})
    return {
        "description": "Periodic series: an instant in a time zone -> its local date (the host's tz data) -> the period (the core) -> the counter id and the formatted id. Generated and checked by tests/vectors/periods.py (Python's zoneinfo as the oracle).",
        "conventions": [
            f"Every case's sequence is {{name: \"{NAME}\", reset, timeZone, yearStart (when given), format (when given), scope: the keys of `document` (when given)}}.",
            "Hosts (JS Intl, the sidecar's tz database): for each case with `instant` (milliseconds since the epoch, as a string) and `localDate`, the local date of the instant in `timeZone` must be `localDate` (YYYY-MM-DD).",
            "The period window (the core's PeriodWindows, its local dates answered by each host: jiff natively, Intl through Wasm): for each case with `instant` and `period`, the window of the instant is `window`: `from`, the first instant whose local date is the period's first date or later, and `until`, the first instant whose local date is `nextPeriodStart` or later (ms as strings; the first and last instants the core takes, and the one after, where there is no such date).",
            "The core (natively and through Wasm): `instant`, when given, passes check_instant (else error INVALID_DATE, stage `instant`); `localDate` -> `period` (SequenceSpec::period_of; else error INVALID_DATE, stage `period`) -> `counterId` (counter_id_in(document, period); CounterKey::parse gives the period back) -> `formatted` (format_value(value, period)) and `nextPeriodStart` (the first local date of the next period; null after 9999-12-31).",
        ],
        "cases": cases,
    }


def node_dates(cases):
    """The local dates of the cases' instants by Node's Intl (ICU), or None without node."""
    node = shutil.which("node")
    if node is None:
        return None
    script = r"""
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([ms, zone]) => {
  const parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", era: "short" }).formatToParts(new Date(Number(ms)));
  const get = (type) => parts.find((p) => p.type === type).value;
  const year = get("era") === "BC" ? 1 - Number(get("year")) : Number(get("year"));
  return `${String(year).padStart(4, "0")}-${get("month")}-${get("day")}`;
});
process.stdout.write(JSON.stringify(out));
"""
    asked = [(c["instant"], c["timeZone"]) for c in cases if "instant" in c and "localDate" in c]
    result = subprocess.run([node, "-e", script], input=json.dumps(asked), capture_output=True, text=True, check=True)
    return dict(zip(asked, json.loads(result.stdout)))


def main():
    built = build()
    text = json.dumps(built, indent=2, ensure_ascii=False) + "\n"
    if "--write" in sys.argv:
        FILE.write_text(text)
        print(f"wrote {FILE} ({len(built['cases'])} cases)")
    problems = []
    committed = json.loads(FILE.read_text())
    by_name = {case["name"]: case for case in committed["cases"]}
    for case in committed["cases"]:
        inputs_only = {key: case[key] for key in INPUT_KEYS if key in case}
        if "instant" not in case and "localDate" in case:
            inputs_only["localDate"] = case["localDate"]
        want = {**inputs_only, **expected(inputs_only)}
        if want != case:
            problems.append(f"{case['name']}: the oracle says {json.dumps(want)}, the file {json.dumps(case)}")
    if [c["name"] for c in committed["cases"]] != [c["name"] for c in built["cases"]]:
        problems.append("the file's cases are not the script's CASES (run with --write)")
    icu = node_dates(committed["cases"])
    if icu is None:
        print("node not found: local dates checked with zoneinfo only")
    else:
        for (instant, zone), date in icu.items():
            case = next(c for c in committed["cases"] if c.get("instant") == instant and c["timeZone"] == zone)
            if case["localDate"] != date:
                problems.append(f"{case['name']}: Intl (ICU) says {date}, zoneinfo {case['localDate']}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{FILE.name}: {len(by_name)} cases agree with zoneinfo" + ("" if icu is None else " and Intl (ICU)"))


if __name__ == "__main__":
    main()
