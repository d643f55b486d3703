//! `PeriodWindows`: the period of an instant for a sequence that resets, and the windows of
//! instants sharing a period, kept so a host's warm path compares two integers instead of
//! asking its time-zone data.
//!
//! The core has no time-zone data: the host answers the local dates of the instants it is asked
//! (the `localDates` answer, Intl in JS, jiff natively); the window is found from those dates
//! alone, the same way on every host.
//!
//! ```text
//! period_at(ms) ── ms in the current window or a kept one ──▶ Period (no question asked)
//!    └──▶ LocalDates([ms]) ─▶ answer([date]) ─▶ its period P (INVALID_DATE: a fiscal year > 9999)
//!           └──▶ per end of P (P's first local date, the next period's): the first instant whose
//!                local date is that date or later, asked one round per step for both ends:
//!                1. where it would be at the offset of the last change found (the instant and
//!                   the one before: two dates tell whether it is there; most often it is);
//!                2. else by bisection over [midnight UTC ± 36 h] (every zone's offset, local
//!                   mean times included, is within ±16 h): the bracket's two ends, then on the
//!                   quarter hours from its start, then the instant before the quarter hour
//!                   found (the change is almost always on one), else to the millisecond
//!           └──▶ Period(P); the window [from, until) becomes the current one, the one before it
//!                kept (up to KEPT_WINDOWS), when it holds ms
//! ```
//!
//! **Why the window holds only P.** Local dates move forward with the instant, so every instant
//! from the first one dated on P's first day to the last one dated before the next period's
//! first day is in P — also where midnight does not exist (a daylight-saving change at
//! midnight: the day begins at the change) or repeats. A zone whose dates step back across a
//! period's start inside the bracket may make the search land on another change than the one
//! at hand: a window that does not hold the instant asked for is not kept (every call there
//! asks again).
//!
//! Before 0001-01-01 and after 9999-12-31 (no such period) a window runs to the first or last
//! instant the core takes ([`MIN_INSTANT_MS`], [`MAX_INSTANT_MS`]).

use serde::Serialize;

use crate::counter::dated::periods_of;
use crate::error::SeqError;
use crate::protocol::reply::Reply;
use crate::sequence::calendar::{days_from_civil, LocalDate};
use crate::sequence::instant::{check_instant, MAX_INSTANT_MS, MIN_INSTANT_MS};
use crate::sequence::options::SequenceSpec;
use crate::sequence::period::Period;

/// Half the bracket a period's first instant is searched in, around its date's midnight UTC.
pub const BRACKET_MS: i64 = 36 * 3_600_000;

/// Windows kept besides the current one: callers that alternate between a few periods (now,
/// and dates of last year) ask the host once per period.
pub const KEPT_WINDOWS: usize = 4;

const DAY_MS: i64 = 86_400_000;

/// The grid searched first: offsets and their changes fall on quarter hours but for local mean
/// times, so the change is found in about 10 dates per end instead of 28.
const QUARTER_HOUR_MS: i64 = 900_000;

/// The instants `[from, until)` (ms since the epoch) whose period is `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PeriodWindow {
    pub period: Period,
    pub from: i64,
    pub until: i64,
}

impl PeriodWindow {
    pub fn contains(&self, ms: i64) -> bool {
        self.from <= ms && ms < self.until
    }
}

/// What [`PeriodWindows`] needs next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowStep {
    /// The period of the instant asked about.
    Period(Period),
    /// The local dates of these instants (each one the core accepts), in the sequence's zone,
    /// for [`PeriodWindows::answer`].
    LocalDates(Vec<i64>),
}

/// See the module docs.
#[derive(Debug, Clone)]
pub struct PeriodWindows {
    spec: SequenceSpec,
    current: Option<PeriodWindow>,
    /// Earlier windows, most recent first.
    kept: Vec<PeriodWindow>,
    search: Option<Search>,
    /// Midnight UTC minus the instant the last change found began: where the next search
    /// looks first.
    offset: Option<i64>,
}

#[derive(Debug, Clone)]
struct Search {
    ms: i64,
    /// `None` until the period of `ms` is known.
    period: Option<Period>,
    start: End,
    end: End,
}

/// The search for the first instant whose local date is `target` or later.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Not started (the period is not known yet).
    Unknown,
    /// The instant the date would begin at the offset of the last change found, and the one
    /// before it, asked together (offsets rarely differ from one period's start to the next):
    /// the change when they straddle it, else the bracket.
    Guess {
        at: i64,
        low: i64,
        high: i64,
        target: LocalDate,
    },
    /// The bracket's ends, asked together.
    Bracket {
        low: i64,
        high: i64,
        target: LocalDate,
    },
    /// Bisecting on the quarter hours from `low`: the date of `low` is before `target`, that of
    /// `high` is not.
    Coarse {
        low: i64,
        high: i64,
        target: LocalDate,
    },
    /// Within a quarter hour: is `high` the change (the instant before it dated earlier)?
    Edge {
        low: i64,
        high: i64,
        target: LocalDate,
    },
    /// Bisecting to the millisecond (an offset off the quarter hours: local mean time).
    Fine {
        low: i64,
        high: i64,
        target: LocalDate,
    },
    Found(i64),
    /// The bracket does not hold the change (no window).
    Failed,
}

impl End {
    /// The search for where `date` begins (`None`: no such date, the window runs to `beyond`).
    /// `offset`: midnight UTC minus the instant the last change found began, if any.
    fn of(date: Option<LocalDate>, beyond: i64, offset: Option<i64>) -> Self {
        let Some(date) = date else {
            return Self::Found(beyond);
        };
        let Some(midnight) = midnight_utc(date) else {
            return Self::Failed;
        };
        let low = midnight.saturating_sub(BRACKET_MS).max(MIN_INSTANT_MS);
        let high = midnight.saturating_add(BRACKET_MS).min(MAX_INSTANT_MS);
        match offset.map(|offset| midnight.saturating_sub(offset)) {
            Some(at) if low < at && at <= high => Self::Guess {
                at,
                low,
                high,
                target: date,
            },
            _ => Self::Bracket {
                low,
                high,
                target: date,
            },
        }
    }

    /// The instant asked next while bisecting.
    fn probe(&self) -> Option<i64> {
        match *self {
            Self::Coarse { low, high, .. } => {
                let steps = (high.saturating_sub(low) / QUARTER_HOUR_MS / 2).max(1);
                Some(low.saturating_add(steps.saturating_mul(QUARTER_HOUR_MS)))
            }
            Self::Edge { high, .. } => Some(high.saturating_sub(1)),
            Self::Fine { low, high, .. } => Some(low.saturating_add(high.saturating_sub(low) / 2)),
            Self::Unknown
            | Self::Guess { .. }
            | Self::Bracket { .. }
            | Self::Found(_)
            | Self::Failed => None,
        }
    }

    /// The instants this end needs dated next.
    fn asks(&self, out: &mut Vec<i64>) {
        match *self {
            Self::Bracket { low, high, .. } => out.extend([low, high]),
            Self::Guess { at, .. } => out.extend([at.saturating_sub(1), at]),
            _ => {}
        }
        out.extend(self.probe());
    }

    /// The end after the dates it asked for (taken from the front of `dates`).
    fn answered(self, dates: &mut std::slice::Iter<'_, LocalDate>) -> Result<Self, SeqError> {
        let mut next = || dates.next().copied().ok_or_else(too_few);
        let probe = self.probe();
        Ok(match self {
            Self::Guess {
                at,
                low,
                high,
                target,
            } => {
                let (before, at_guess) = (next()?, next()?);
                if before < target && at_guess >= target {
                    Self::Found(at)
                } else {
                    Self::Bracket { low, high, target }
                }
            }
            Self::Bracket { low, high, target } => {
                let (at_low, at_high) = (next()?, next()?);
                if at_low >= target {
                    // Dated on or after the target from the first instant the core takes.
                    if low == MIN_INSTANT_MS {
                        Self::Found(MIN_INSTANT_MS)
                    } else {
                        Self::Failed
                    }
                } else if at_high < target {
                    if high == MAX_INSTANT_MS {
                        Self::Found(MAX_INSTANT_MS.saturating_add(1))
                    } else {
                        Self::Failed
                    }
                } else {
                    Self::Coarse { low, high, target }.settled()
                }
            }
            Self::Coarse { low, high, target } | Self::Fine { low, high, target } => {
                let at = probe.unwrap_or(high);
                let (low, high) = if next()? < target {
                    (at, high)
                } else {
                    (low, at)
                };
                match self {
                    Self::Coarse { .. } => Self::Coarse { low, high, target },
                    _ => Self::Fine { low, high, target },
                }
                .settled()
            }
            Self::Edge { low, high, target } => {
                if next()? < target {
                    Self::Found(high)
                } else {
                    Self::Fine {
                        low,
                        high: high.saturating_sub(1),
                        target,
                    }
                    .settled()
                }
            }
            done @ (Self::Unknown | Self::Found(_) | Self::Failed) => done,
        })
    }

    /// The next stage once a bisection has narrowed: a quarter hour, then one millisecond.
    fn settled(self) -> Self {
        match self {
            Self::Coarse { low, high, .. } | Self::Fine { low, high, .. }
                if high.saturating_sub(low) <= 1 =>
            {
                Self::Found(high)
            }
            Self::Coarse { low, high, target } if high.saturating_sub(low) <= QUARTER_HOUR_MS => {
                Self::Edge { low, high, target }
            }
            other => other,
        }
    }
}

/// The instant `date` begins in UTC.
fn midnight_utc(date: LocalDate) -> Option<i64> {
    days_from_civil(i64::from(date.year()), date.month(), date.day())?.checked_mul(DAY_MS)
}

fn too_few() -> SeqError {
    SeqError::unexpected_reply("`localDates` answered fewer dates than instants asked")
}

impl PeriodWindows {
    /// The windows of `spec`, a sequence that resets (else `INVALID_ARGUMENT` naming `reset`).
    pub fn new(spec: &SequenceSpec) -> Result<Self, SeqError> {
        if !spec.reset().is_periodic() {
            return Err(SeqError::invalid_argument(
                "reset",
                format!("sequence `{}` never resets: it has no periods", spec.name()),
            ));
        }
        Ok(Self {
            spec: spec.clone(),
            current: None,
            kept: Vec::with_capacity(KEPT_WINDOWS),
            search: None,
            offset: None,
        })
    }

    /// The window of the period last given, when it was kept: what a host compares its clock
    /// with before it calls [`period_at`](Self::period_at) again.
    pub fn current(&self) -> Option<PeriodWindow> {
        self.current
    }

    /// The period of `ms` (checked: `INVALID_DATE` naming `date`), from a window kept, or the
    /// local dates to ask the host for (a search in progress is dropped).
    pub fn period_at(&mut self, ms: i64) -> Result<WindowStep, SeqError> {
        self.search = None;
        let ms = check_instant("date", None, ms)?;
        if let Some(current) = self.current.filter(|w| w.contains(ms)) {
            return Ok(WindowStep::Period(current.period));
        }
        if let Some(position) = self.kept.iter().position(|w| w.contains(ms)) {
            let window = self.kept.remove(position);
            self.make_current(window);
            return Ok(WindowStep::Period(window.period));
        }
        self.search = Some(Search {
            ms,
            period: None,
            start: End::Unknown,
            end: End::Unknown,
        });
        Ok(WindowStep::LocalDates(vec![ms]))
    }

    /// The host's local dates (`YYYY-MM-DD`) of the instants last asked for, in order. A reply
    /// of another length or shape is `UNEXPECTED_REPLY`; the date of the instant itself may be
    /// `INVALID_DATE` (a fiscal year beyond 9999). Either ends the search.
    pub fn answer(&mut self, dates: Vec<String>) -> Result<WindowStep, SeqError> {
        if let Some(Search {
            ms, period: None, ..
        }) = self.search
        {
            self.search = None;
            let reply = Reply::LocalDates { dates };
            let period = periods_of(&self.spec, reply, 1, "date", |_| None)?
                .into_iter()
                .next()
                .ok_or_else(too_few)??;
            return self.search_ends(ms, period);
        }
        let dates = dates
            .iter()
            .map(|text| {
                LocalDate::read(text).map_err(|_| {
                    SeqError::unexpected_reply(format!(
                        "`localDates` answered {}, not a date",
                        crate::ejson::quoted(&crate::ejson::truncate(text))
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.answer_dates(&dates)
    }

    /// [`answer`](Self::answer) with the dates at hand rather than as text (a native host).
    pub fn answer_dates(&mut self, dates: &[LocalDate]) -> Result<WindowStep, SeqError> {
        let search = self
            .search
            .take()
            .ok_or_else(|| SeqError::unexpected_reply("no local dates were asked for"))?;
        let Some(period) = search.period else {
            let [date] = dates else {
                return Err(SeqError::unexpected_reply(format!(
                    "`localDates` of 1 instant answered with {} date(s)",
                    dates.len()
                )));
            };
            let period = self.spec.period_of(*date, "date")?.ok_or_else(|| {
                SeqError::unexpected_reply("a sequence that never resets asked for dates")
            })?;
            return self.search_ends(search.ms, period);
        };
        let mut read = dates.iter();
        let start = search.start.answered(&mut read)?;
        let end = search.end.answered(&mut read)?;
        if read.next().is_some() {
            return Err(SeqError::unexpected_reply(
                "`localDates` answered more dates than instants asked",
            ));
        }
        self.go_on(Search {
            ms: search.ms,
            period: Some(period),
            start,
            end,
        })
    }

    /// The search for the window of `period`, which holds `ms`.
    fn search_ends(&mut self, ms: i64, period: Period) -> Result<WindowStep, SeqError> {
        let start = End::of(
            self.spec.period_start(&period)?,
            MIN_INSTANT_MS,
            self.offset,
        );
        let next = self.spec.next_period_start(&period)?;
        let end = End::of(next, MAX_INSTANT_MS.saturating_add(1), self.offset);
        self.go_on(Search {
            ms,
            period: Some(period),
            start,
            end,
        })
    }

    /// The next question of `search`, or its period once both ends are known (its window kept
    /// when it holds the instant).
    fn go_on(&mut self, search: Search) -> Result<WindowStep, SeqError> {
        let period = search
            .period
            .ok_or_else(|| SeqError::unexpected_reply("a window searched without a period"))?;
        let mut asks = Vec::new();
        search.start.asks(&mut asks);
        search.end.asks(&mut asks);
        if !asks.is_empty() {
            self.search = Some(search);
            return Ok(WindowStep::LocalDates(asks));
        }
        if let Some(next) = self.spec.next_period_start(&period)?.and_then(midnight_utc) {
            if let End::Found(until) = search.end {
                if until <= MAX_INSTANT_MS {
                    self.offset = Some(next.saturating_sub(until));
                }
            }
        }
        if let (End::Found(from), End::Found(until)) = (search.start, search.end) {
            let window = PeriodWindow {
                period,
                from,
                until,
            };
            if window.contains(search.ms) {
                self.make_current(window);
            }
        }
        Ok(WindowStep::Period(period))
    }

    fn make_current(&mut self, window: PeriodWindow) {
        if let Some(before) = self.current.replace(window) {
            self.kept.insert(0, before);
            self.kept.truncate(KEPT_WINDOWS);
        }
    }
}

#[cfg(test)]
mod tests;
