//! The hosts' part of `tests/vectors/periods.json` (instant + zone → local date) through the
//! executor's answer to the core's `localDates` (jiff's compiled-in tz database), as the
//! sidecar and applications run it; and the host's half of the `timeZone` option's check (an
//! unknown zone is `INVALID_OPTION` naming `timeZone`, before any command). The core replays the
//! rest of the file (local date → period → counter id → formatted id).

use std::path::PathBuf;

use mongo_seq::core::{Command, PeriodWindows, Reply, SequenceSpec, WindowStep};
use mongo_seq::executor::{local_dates_in, time_zone, ExecuteError, Executor};
use mongo_seq::{Error, SequenceOptions};
use mongodb::options::{ClientOptions, ServerAddress};
use serde_json::{json, Value};

fn cases() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/periods.json");
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("periods.json")).expect("JSON");
    file["cases"].as_array().expect("cases").clone()
}

/// A client that never connects: `localDates` sends nothing to a server.
fn database() -> mongodb::Database {
    let options = ClientOptions::builder()
        .hosts(vec![ServerAddress::Tcp {
            host: "127.0.0.1".to_owned(),
            port: Some(9),
        }])
        .build();
    mongodb::Client::with_options(options)
        .expect("a client")
        .database("never_used")
}

async fn local_dates(zone: &str, instants: Vec<i64>) -> Result<Reply, ExecuteError> {
    Executor::new(database().collection("counters"))
        .execute(Command::LocalDates {
            time_zone: zone.to_owned(),
            instants,
        })
        .await
}

fn instant(case: &Value) -> i64 {
    case["instant"]
        .as_str()
        .expect("a string")
        .parse()
        .expect("ms")
}

#[tokio::test]
async fn every_instant_of_the_vectors_has_its_local_date() {
    let mut replayed = 0;
    let mut problems = Vec::new();
    for case in cases().iter().filter(|c| c.get("instant").is_some()) {
        let name = case["name"].as_str().expect("a name");
        let zone = case["timeZone"].as_str().expect("a zone");
        let reply = local_dates(zone, vec![instant(case)]).await;
        match (&case["localDate"], &case["error"]["stage"], reply) {
            (Value::String(expected), _, Ok(Reply::LocalDates { dates })) => {
                if dates != [expected.as_str()] {
                    problems.push(format!("{name}: {dates:?}, expected {expected}"));
                }
            }
            // An instant the core refuses (out of range) is refused here too, not misconverted.
            (Value::Null, Value::String(stage), Err(ExecuteError::Reply(e)))
                if stage == "instant" && e.code() == case["error"]["code"] => {}
            (_, _, other) => problems.push(format!("{name}: {other:?}")),
        }
        replayed += 1;
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(replayed >= 50, "only {replayed} cases with an instant");
}

#[tokio::test]
async fn one_reply_for_many_instants_in_order() {
    let by_zone: Vec<Value> = cases()
        .into_iter()
        .filter(|c| c["timeZone"] == "Pacific/Auckland" && c["localDate"].is_string())
        .filter(|c| c.get("instant").is_some())
        .collect();
    assert!(by_zone.len() >= 4, "Auckland's cases");
    let reply = local_dates("Pacific/Auckland", by_zone.iter().map(instant).collect())
        .await
        .expect("dates");
    let expected: Vec<&str> = by_zone
        .iter()
        .map(|c| c["localDate"].as_str().expect("a date"))
        .collect();
    assert_eq!(
        reply,
        Reply::LocalDates {
            dates: expected.iter().map(|d| (*d).to_owned()).collect()
        }
    );
    let empty = local_dates("UTC", Vec::new()).await.expect("no dates");
    assert_eq!(empty, Reply::LocalDates { dates: Vec::new() });
}

fn refused_zone(error: &Error) -> bool {
    error.code() == Some("INVALID_OPTION")
        && error.details().map(|d| d["option"].clone()) == Some(json!("timeZone"))
}

#[tokio::test]
async fn an_unknown_zone_is_invalid_option_naming_time_zone() {
    let Err(ExecuteError::Reply(e)) = local_dates("Europe/Atlantis", vec![0]).await else {
        panic!("an unknown zone converts nothing");
    };
    assert_eq!(e.code(), "INVALID_OPTION");
    assert_eq!(e.details().expect("details")["option"], "timeZone");

    // Defining the sequence refuses it, from code and from configuration, as the npm package
    // does: the syntax is the core's to check, the zone's existence the tz database's.
    let options =
        SequenceOptions::try_from(json!({ "reset": "yearly", "timeZone": "Europe/Atlantis" }));
    assert!(refused_zone(&options.unwrap_err()));
    let snake =
        SequenceOptions::try_from(json!({ "reset": "monthly", "time_zone": "Mars/Olympus_Mons" }));
    assert!(refused_zone(&snake.unwrap_err()));
    SequenceOptions::try_from(
        json!({ "reset": "yearly", "time_zone": "Europe/Paris", "year_start": 4 }),
    )
    .expect("a zone of the database");
}

/// The same instants through a sequence's `period_of`: the tz database, then the core.
#[tokio::test]
async fn every_instant_of_the_vectors_is_in_its_period_through_a_sequence() {
    let seqs = mongo_seq::Sequences::new(&database());
    let mut replayed = 0;
    for (i, case) in cases().iter().enumerate() {
        let (Some(_), Some(expected)) = (case.get("instant"), case["period"].as_str()) else {
            continue;
        };
        let mut options = json!({ "reset": case["reset"], "timeZone": case["timeZone"] });
        if let Some(start) = case.get("yearStart") {
            options["yearStart"] = start.clone();
        }
        let options = SequenceOptions::try_from(options).expect("options");
        let sequence = seqs
            .sequence(&format!("inv{i}"), options)
            .expect("a sequence");
        let date = mongodb::bson::DateTime::from_millis(instant(case));
        let period = sequence
            .period_of(date)
            .expect("a period")
            .expect("it resets");
        assert_eq!(period.text(), expected, "{}", case["name"]);
        replayed += 1;
    }
    assert!(replayed >= 45, "{replayed} cases");
}

/// The period window of each instant of the vectors: the core's `PeriodWindows`, its local
/// dates answered by jiff, gives the file's `window` (the npm package replays the same cases
/// through Wasm and Intl: `tests/runtimes/period-cases.mjs`).
#[test]
fn the_core_s_period_window_of_every_instant_of_the_vectors() {
    let mut replayed = 0;
    let mut problems = Vec::new();
    for case in cases() {
        let Some(expected) = case.get("window") else {
            continue;
        };
        let mut options =
            json!({ "name": "inv", "reset": case["reset"], "timeZone": case["timeZone"] });
        if let Some(start) = case.get("yearStart") {
            options["yearStart"] = start.clone();
        }
        let spec = SequenceSpec::parse(&options).expect("a spec");
        let zone = time_zone(spec.time_zone()).expect("a zone");
        let mut windows = PeriodWindows::new(&spec).expect("it resets");
        let mut step = windows.period_at(instant(&case)).expect("an instant");
        while let WindowStep::LocalDates(instants) = step {
            let dates = local_dates_in(&zone, &instants).expect("dates");
            step = windows.answer_dates(&dates).expect("an answer");
        }
        let got = windows
            .current()
            .map(|w| json!({ "from": w.from.to_string(), "until": w.until.to_string() }));
        if got.as_ref() != Some(expected) {
            problems.push(format!("{}: {got:?}, expected {expected}", case["name"]));
        }
        replayed += 1;
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(replayed >= 45, "only {replayed} cases with a window");
}
