//! A sequence that resets (option `reset`): numbers in the period of a date (default now), as
//! the core's `SeriesCounters` routes them (see `crate::counter`), and the handle of one
//! period's counter.

use std::sync::Arc;

use mongo_seq_core::{check_instant, CounterHandle, Period};
use mongodb::bson::DateTime;

use super::{Binding, Bound, Sequence};
use crate::error::Result;

/// A caller's date as milliseconds, checked by the core (`INVALID_DATE` naming `date`).
fn instant(date: DateTime) -> Result<i64> {
    Ok(check_instant("date", None, date.timestamp_millis())?)
}

/// A number with its period and formatted id: what [`Sequence::next_formatted`] gives.
///
/// ```no_run
/// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
/// use mongo_seq::{Reset, SequenceOptions};
///
/// let options = SequenceOptions::new().reset(Reset::Yearly).time_zone("Europe/Paris").format("INV-{yyyy}-{seq:06}");
/// let invoices = seqs.sequence("invoices", options)?;
/// let issued = invoices.next_formatted().await?;
/// println!("{} in {:?}", issued.formatted.unwrap_or_default(), issued.period.map(|p| p.text()));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Issued {
    /// The number.
    pub value: i64,
    /// Its period (`None` when the sequence never resets).
    pub period: Option<Period>,
    /// Its formatted id (`None` without a `format`).
    pub formatted: Option<String>,
}

impl Sequence {
    /// The counter this handle takes from for `date` (ms, checked; `None`: now) and its period.
    pub(super) fn counter_at(&self, date: Option<i64>) -> Result<(CounterHandle, Option<Period>)> {
        let counters = &self.shared.counters;
        match &self.binding {
            Binding::Series(series) => counters.route(series.id, date),
            Binding::Counter(bound) => {
                if let (Some(ms), Some(_)) = (date, bound.period) {
                    if let Some(of_date) = counters.period_at(ms)? {
                        counters.check_period(bound.counter, &of_date)?;
                    }
                }
                Ok((bound.counter, bound.period))
            }
            Binding::Unbound => Err(self.no_counter(None)),
        }
    }

    /// The next number, in the period of `date` for a sequence that resets (yearly, monthly,
    /// daily in its `time_zone`): a document dated 31 December is numbered in December's series
    /// even when it is numbered on New Year's Day. `date` is a `bson::DateTime` or a
    /// `SystemTime`, from 0001-01-02 to 9999-12-29 UTC (else `INVALID_DATE` naming `date`,
    /// nothing reserved). A sequence that never resets checks the date and ignores it.
    /// [`next`](Self::next) is `next_at(now)`.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    /// use mongodb::bson::DateTime;
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly).time_zone("Europe/Paris"))?;
    /// // 2025-12-31T23:30:00Z is already 2026 in Paris: counter `invoices/2026`.
    /// let late = DateTime::parse_rfc3339_str("2025-12-31T23:30:00Z").unwrap();
    /// assert_eq!(invoices.next_at(late).await?, 1);
    /// assert_eq!(invoices.period_of(late)?.map(|p| p.text()).as_deref(), Some("2026"));
    /// # Ok(()) }
    /// ```
    pub async fn next_at(&self, date: impl Into<DateTime>) -> Result<i64> {
        let ms = instant(date.into())?;
        let (counter, _) = self.counter_at(Some(ms))?;
        let numbers = self.take(counter, 1).await?;
        let first = numbers.values().next().unwrap_or_default();
        Ok(first)
    }

    /// [`next_many`](Self::next_many) in the period of `date` (see [`next_at`](Self::next_at)).
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let tickets = seqs.sequence("tickets", SequenceOptions::new().reset(Reset::Monthly))?;
    /// let may = mongodb::bson::DateTime::builder().year(2026).month(5).day(17).build().unwrap();
    /// assert_eq!(tickets.next_many_at(3, may).await?, [1, 2, 3]); // counter `tickets/2026-05`
    /// # Ok(()) }
    /// ```
    pub async fn next_many_at(&self, count: u64, date: impl Into<DateTime>) -> Result<Vec<i64>> {
        let ms = instant(date.into())?;
        let (counter, _) = self.counter_at(Some(ms))?;
        let numbers = self.take(counter, count).await?;
        Ok(numbers.values().collect())
    }

    /// The next number with its period and formatted id (the period's tokens filled in:
    /// `INV-{yyyy}-{seq:06}` → `INV-2026-000001`), now.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly).format("INV-{yyyy}-{seq:06}"))?;
    /// let issued = invoices.next_formatted().await?;
    /// assert_eq!(issued.value, 1);
    /// assert!(issued.formatted.unwrap().ends_with("-000001"));
    /// # Ok(()) }
    /// ```
    pub async fn next_formatted(&self) -> Result<Issued> {
        self.issue(None).await
    }

    /// [`next_formatted`](Self::next_formatted) in the period of `date`.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let fiscal = SequenceOptions::new().reset(Reset::Yearly).year_start(4).format("FY{yy}/{seq}");
    /// let credit_notes = seqs.sequence("credit_notes", fiscal)?;
    /// let may = mongodb::bson::DateTime::builder().year(2026).month(5).day(2).build().unwrap();
    /// // The fiscal year from April 2026 to March 2027 is 2027.
    /// assert_eq!(credit_notes.next_formatted_at(may).await?.formatted.as_deref(), Some("FY27/1"));
    /// # Ok(()) }
    /// ```
    pub async fn next_formatted_at(&self, date: impl Into<DateTime>) -> Result<Issued> {
        self.issue(Some(instant(date.into())?)).await
    }

    async fn issue(&self, ms: Option<i64>) -> Result<Issued> {
        let (counter, period) = self.counter_at(ms)?;
        let numbers = self.take(counter, 1).await?;
        let value = numbers.values().next().unwrap_or_default();
        Ok(Issued {
            value,
            period,
            formatted: self.shared.spec.format_value(value, period.as_ref()),
        })
    }

    /// The period of `date` (`None` when the sequence never resets): its local date in the
    /// sequence's `time_zone`, placed by `reset` and `year_start`.
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Reset, SequenceOptions};
    ///
    /// let sales = seqs.sequence("sales", SequenceOptions::new().reset(Reset::Daily).time_zone("Pacific/Auckland"))?;
    /// let instant = mongodb::bson::DateTime::parse_rfc3339_str("2026-05-17T20:00:00Z").unwrap();
    /// assert_eq!(sales.period_of(instant)?.unwrap().text(), "2026-05-18");
    /// # Ok(()) }
    /// ```
    pub fn period_of(&self, date: impl Into<DateTime>) -> Result<Option<Period>> {
        self.shared.counters.period_at(instant(date.into())?)
    }

    /// The handle of this series' counter in `period` (`Period::parse("2026")`): its
    /// [`current`](Self::current), [`state`](Self::state), [`set_next`](Self::set_next),
    /// [`seed_from_max`](Self::seed_from_max), and numbers of that period whatever the date.
    /// `INVALID_ARGUMENT` naming `period` for a period of another kind, or when the sequence
    /// never resets; a scoped sequence needs [`scoped`](Self::scoped) first.
    ///
    /// ```no_run
    /// # async fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Period, Reset, SequenceOptions};
    ///
    /// let invoices = seqs.sequence("invoices", SequenceOptions::new().reset(Reset::Yearly))?;
    /// let year = invoices.in_period(&Period::parse("2026").unwrap())?;
    /// assert_eq!(year.counter_id()?, "invoices/2026");
    /// year.set_next(500).await?; // carry on from the old system's numbers of 2026
    /// assert_eq!(year.next().await?, 500);
    /// # Ok(()) }
    /// ```
    pub fn in_period(&self, period: &Period) -> Result<Self> {
        let (series, scope) = match &self.binding {
            Binding::Series(series) => (series.id, series.scope().cloned()),
            Binding::Counter(bound) => (bound.series, bound.scope.clone()),
            Binding::Unbound => return Err(self.no_counter(None)),
        };
        let shared = &self.shared;
        let (counter, counter_id) = shared.counters.counter_in(series, Some(period))?;
        Ok(Self {
            shared: Arc::clone(shared),
            binding: Binding::Counter(Bound {
                counter_id,
                scope,
                series,
                counter,
                period: Some(*period),
            }),
        })
    }

    /// The formatted id of `value` in `period` (`None` without a `format`; a sequence that never
    /// resets takes `None`).
    ///
    /// ```no_run
    /// # fn example(seqs: mongo_seq::Sequences) -> mongo_seq::Result<()> {
    /// use mongo_seq::{Period, Reset, SequenceOptions};
    ///
    /// let tickets = seqs.sequence("tickets", SequenceOptions::new().reset(Reset::Monthly).format("T{yy}{mm}-{seq:04}"))?;
    /// let may = Period::parse("2026-05").unwrap();
    /// assert_eq!(tickets.format_in(7, Some(&may)).as_deref(), Some("T2605-0007"));
    /// # Ok(()) }
    /// ```
    pub fn format_in(&self, value: i64, period: Option<&Period>) -> Option<String> {
        self.shared.spec.format_value(value, period)
    }
}
