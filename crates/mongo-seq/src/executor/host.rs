//! The commands the host answers itself, without the server: a `wait` (a random sleep within
//! the core's window: the core draws no random numbers) and `localDates` (instants → local
//! dates in a sequence's time zone: the core has no clock and no time-zone data). Time zones
//! come from [jiff]'s copy of the IANA database compiled into the binary, so a `FROM scratch`
//! image with no zoneinfo converts exactly as a full system does.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use mongo_seq_core::{check_instant, Command, LocalDate, Reply, SeqError, SequenceSpec};

use super::ExecuteError;

/// The zone named `name` (an IANA name, `UTC`), or `INVALID_OPTION` naming `timeZone` when the
/// compiled-in database has no such zone: the host's half of the `timeZone` option's check
/// (the core checks its syntax only), made wherever a sequence that resets is defined, before
/// any command — as the npm package does with `Intl`.
///
/// ```
/// use mongo_seq::executor::time_zone;
///
/// assert_eq!(time_zone("Europe/Paris")?.iana_name(), Some("Europe/Paris"));
/// let unknown = time_zone("Europe/Atlantis").unwrap_err();
/// assert_eq!(unknown.code(), "INVALID_OPTION");
/// assert_eq!(unknown.details().unwrap()["option"], "timeZone");
/// # Ok::<(), mongo_seq::SeqError>(())
/// ```
pub fn time_zone(name: &str) -> Result<TimeZone, SeqError> {
    jiff::tz::db()
        .get(name)
        .map_err(|_| SeqError::InvalidOption {
            option: "timeZone".to_owned(),
            reason: format!(
                "unknown time zone {}: not in the IANA time-zone database (`UTC`, `Europe/Paris`, `America/New_York`)",
                serde_json::Value::from(name)
            ),
        })
}

/// [`time_zone`] of a sequence that resets (`Ok` for one that never does: it has no zone).
///
/// ```
/// use mongo_seq::core::SequenceSpec;
/// use mongo_seq::executor::check_time_zone;
/// use serde_json::json;
///
/// let paris = SequenceSpec::parse(&json!({ "name": "inv", "reset": "yearly", "timeZone": "Europe/Paris" }))?;
/// assert!(check_time_zone(&paris).is_ok());
/// // The core accepts the name's syntax; the tz database knows no such zone.
/// let atlantis = SequenceSpec::parse(&json!({ "name": "inv", "reset": "yearly", "timeZone": "Europe/Atlantis" }))?;
/// assert_eq!(check_time_zone(&atlantis).unwrap_err().code(), "INVALID_OPTION");
/// # Ok::<(), mongo_seq::SeqError>(())
/// ```
pub fn check_time_zone(spec: &SequenceSpec) -> Result<(), SeqError> {
    if spec.reset().is_periodic() {
        time_zone(spec.time_zone())?;
    }
    Ok(())
}

/// The local date (`YYYY-MM-DD`, proleptic Gregorian) of each instant (milliseconds since the
/// epoch) in the zone `time_zone`, in order: the reply to the core's `localDates`.
///
/// ```
/// use mongo_seq::core::Reply;
/// use mongo_seq::executor::local_dates;
///
/// // The last and the first millisecond of 2025 in Paris.
/// let reply = local_dates("Europe/Paris", &[1_767_221_999_999, 1_767_222_000_000])?;
/// let Reply::LocalDates { dates } = reply else { unreachable!() };
/// assert_eq!(dates, ["2025-12-31", "2026-01-01"]);
/// # Ok::<(), mongo_seq::SeqError>(())
/// ```
pub fn local_dates(time_zone_name: &str, instants: &[i64]) -> Result<Reply, SeqError> {
    let dates = local_dates_in(&time_zone(time_zone_name)?, instants)?;
    Ok(Reply::LocalDates {
        dates: dates.iter().map(LocalDate::to_string).collect(),
    })
}

/// [`local_dates`] in a zone at hand, as dates (the core's `PeriodWindows` asks them of a
/// sequence's zone).
pub fn local_dates_in(zone: &TimeZone, instants: &[i64]) -> Result<Vec<LocalDate>, SeqError> {
    instants.iter().map(|&ms| local_date(zone, ms)).collect()
}

fn local_date(zone: &TimeZone, ms: i64) -> Result<LocalDate, SeqError> {
    // The core sends instants in this range only; one outside is refused, not misconverted.
    let ms = check_instant("date", None, ms)?;
    let invalid = |reason: String| SeqError::InvalidDate {
        argument: "date".to_owned(),
        index: None,
        reason,
    };
    let timestamp = Timestamp::from_millisecond(ms).map_err(|e| invalid(e.to_string()))?;
    let date = zone.to_datetime(timestamp).date();
    let (month, day) = (date.month().unsigned_abs(), date.day().unsigned_abs());
    LocalDate::new(date.year().into(), month, day)
        .ok_or_else(|| invalid(format!("{date} has no year 1 to 9999")))
}

/// The answer to a `wait` (a sleep of a random time within `[min_ms, max_ms]`) or a
/// `localDates`; `None` for a command the server runs.
pub(super) async fn answer(command: &Command) -> Option<Result<Reply, ExecuteError>> {
    match command {
        Command::Wait { min_ms, max_ms } => {
            let ms = rand::random_range(*min_ms..=(*max_ms).max(*min_ms));
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            Some(Ok(Reply::Waited))
        }
        Command::LocalDates {
            time_zone,
            instants,
        } => Some(local_dates(time_zone, instants).map_err(ExecuteError::from)),
        _ => None,
    }
}
