//! The configuration file's validation: defaults, environment overrides, errors naming the key.

use super::*;

fn check(text: &str) -> Result<Config, String> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| e.to_string())?;
    validate(raw, |_| None).map_err(|e| e.to_string())
}

const BASE: &str = "[mongodb]\nuri = \"mongodb://u:p@h/\"\n";

#[test]
fn minimal_config_gets_defaults() {
    let c = check(&format!(
        "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n"
    ))
    .unwrap();
    assert_eq!(c.counters.to_string(), "app.counters");
    assert_eq!(c.state.to_string(), "app.mongo_seq_state");
    assert_eq!(c.ledger.to_string(), "app.mongo_seq_ledger");
    assert_eq!(c.triggers[0].numbering.sequence().name(), "app.orders");
    assert_eq!(c.triggers[0].id, "app.orders.seq");
    assert_eq!(c.settings.batch_size, 1000);
    assert_eq!(c.http.unwrap().to_string(), "127.0.0.1:9464");
}

#[test]
fn a_trigger_s_series_may_reset_in_a_zone_of_the_tz_database() {
    let c = check(&format!(
        "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"invoices\"\nfield = \"number\"\nreset = \"yearly\"\ntime_zone = \"Pacific/Auckland\"\nyear_start = 4\n"
    ))
    .unwrap();
    let spec = c.triggers[0].numbering.sequence();
    assert_eq!(
        (spec.reset().name(), spec.time_zone(), spec.year_start()),
        ("yearly", "Pacific/Auckland", 4)
    );
    let err = check(&format!(
        "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"invoices\"\nfield = \"number\"\nreset = \"monthly\"\ntime_zone = \"Mars/Olympus_Mons\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("trigger[0].time_zone")
            && err.contains("INVALID_OPTION")
            && err.contains("Mars/Olympus_Mons"),
        "{err}"
    );
}

#[test]
fn http_bind_from_the_environment() {
    let text = format!(
        "{BASE}[http]\nbind = \"127.0.0.2\"\nport = 9500\n[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n"
    );
    let with = |bind: &'static str| {
        let raw: RawConfig = toml::from_str(&text).unwrap();
        validate(raw, move |name| {
            (name == HTTP_BIND_ENV).then(|| bind.to_owned())
        })
    };
    assert_eq!(
        check(&text).unwrap().http.unwrap().to_string(),
        "127.0.0.2:9500"
    );
    assert_eq!(
        with("0.0.0.0").unwrap().http.unwrap().to_string(),
        "0.0.0.0:9500"
    );
    assert_eq!(with("::").unwrap().http.unwrap().to_string(), "[::]:9500");
    let err = with("everywhere").unwrap_err().to_string();
    assert!(err.contains(HTTP_BIND_ENV), "{err}");
}

#[test]
fn errors_name_the_key() {
    let t = "[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n";
    let cases = [
        (
            format!("{BASE}[sidecar]\nbacth_size = 1\n{t}"),
            "bacth_size",
        ),
        (
            format!("{BASE}[[trigger]]\ndatabase = \"app\"\nfield = \"seq\"\n"),
            "collection",
        ),
        (
            format!("{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = 5\nfield = \"seq\"\n"),
            "collection",
        ),
        (
            format!("{BASE}{t}sequence = \"a/b\"\n"),
            "trigger[0].sequence",
        ),
        (format!("{BASE}{t}{t}"), "duplicate trigger"),
        (
            format!("{BASE}{t}format = \"X{{seq}}\"\n"),
            "trigger[0].format_field",
        ),
        (
            format!(
                "{BASE}{t}gapless = true\nformat = \"X{{seq}}\"\nformat_field = \"seqEpoch\"\n"
            ),
            "trigger[0].format_field",
        ),
        (
            format!("{BASE}{t}gapless = true\nscope = [\"seqEpoch\"]\n"),
            "trigger[0].scope",
        ),
        (
            format!("{BASE}{t}counter_field = \"a.b\"\n"),
            "trigger[0].counter_field",
        ),
        (
            format!("{BASE}{t}counter_field = 5\n"),
            "trigger[0].counter_field",
        ),
        (
            format!(
                "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"_id\"\n"
            ),
            "trigger[0].field",
        ),
        (
            format!(
                "{BASE}[[trigger]]\ndatabase = \"a.b\"\ncollection = \"orders\"\nfield = \"seq\"\n"
            ),
            "trigger[0].database",
        ),
        (BASE.to_string(), "trigger"),
        (format!("[mongodb]\n{t}"), "mongodb.uri"),
        (format!("{BASE}{t}reset = \"weekly\"\n"), "trigger[0].reset"),
        (
            format!("{BASE}{t}reset = \"yearly\"\nyear_start = 13\n"),
            "trigger[0].year_start",
        ),
        // The syntax is fine; the tz database has no such zone.
        (
            format!("{BASE}{t}reset = \"yearly\"\ntime_zone = \"Europe/Atlantis\"\n"),
            "trigger[0].time_zone",
        ),
        (
            format!("{BASE}{t}time_zone = \"Europe/Paris\"\n"),
            "trigger[0].time_zone",
        ),
    ];
    for (text, key) in cases {
        let err = check(&text).expect_err(&text);
        assert!(err.contains(key), "{err:?} should name {key}");
    }
}

#[test]
fn flags_go_through_the_file_s_validation_and_are_named_as_flags() {
    let raw = |filter: serde_json::Value| RawTrigger {
        database: "app".to_owned(),
        collection: "orders".to_owned(),
        field: "seq".to_owned(),
        step: Some(serde_json::json!(0)),
        filter: filter.as_object().cloned(),
        ..RawTrigger::default()
    };
    let err = validate_trigger(raw(serde_json::json!({ "a": 1 })), Keys::Flags)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--step: "), "{err}");
    let mut top_level = raw(serde_json::json!({ "$where": "1" }));
    top_level.step = None;
    let err = validate_trigger(top_level, Keys::Flags)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--match: top-level `$where`"), "{err}");
    let mut bad_db = raw(serde_json::json!({ "a": 1 }));
    bad_db.database = "a b".to_owned();
    let err = validate_trigger(bad_db, Keys::Flags)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("--db: database name \"a b\""), "{err}");
    // The file's keys for the same mistakes.
    let err = validate_trigger(raw(serde_json::json!({ "a": 1 })), Keys::File { index: 2 })
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("config key `trigger[2].step`: "), "{err}");
}

fn trigger(keys: &str) -> Result<Config, String> {
    check(&format!(
        "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"invoices\"\nfield = \"seq\"\n{keys}\n"
    ))
}

#[test]
fn on_match_makes_the_match_the_numbering_condition() {
    let c = trigger("on = \"match\"\nmatch = { status = \"issued\" }").unwrap();
    assert_eq!(c.triggers[0].on, On::Match);
    assert_eq!(
        c.triggers[0].numbering.condition(),
        Some(&serde_json::json!({ "status": "issued" }))
    );
    // On insert (the default) the match only filters inserts: no condition on the writes.
    let c = trigger("match = { status = \"issued\" }").unwrap();
    assert_eq!(c.triggers[0].on, On::Insert);
    assert_eq!(c.triggers[0].numbering.condition(), None);
}

#[test]
fn bad_on_date_field_and_backfill_sort_are_refused_naming_the_key() {
    let err = trigger("on = \"update\"").unwrap_err();
    assert!(
        err.contains("trigger[0].on") && err.contains("\"insert\" or \"match\""),
        "{err}"
    );
    let err = trigger("on = \"match\"").unwrap_err();
    assert!(
        err.contains("trigger[0].match") && err.contains("required"),
        "{err}"
    );
    let err = trigger("on = 1").unwrap_err();
    assert!(err.contains("on"), "{err}");
    // A sequence that never resets has no period for a date to choose.
    let err = trigger("date_field = \"issuedAt\"").unwrap_err();
    assert!(
        err.contains("trigger[0].date_field") && err.contains("reset"),
        "{err}"
    );
    let err = trigger("backfill_sort = \"a..b\"").unwrap_err();
    assert!(err.contains("trigger[0].backfill_sort"), "{err}");
    let c = trigger("backfill_sort = \"issuedAt\"").unwrap();
    assert_eq!(c.triggers[0].backfill_sort.as_deref(), Some("issuedAt"));
}

#[test]
fn deletions_are_recorded_by_gapless_triggers_unless_turned_off_and_never_by_others() {
    let trigger = |extra: &str| {
        check(&format!(
            "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n{extra}\n"
        ))
    };
    assert!(!trigger("").unwrap().triggers[0].record_deletions);
    assert!(trigger("gapless = true").unwrap().triggers[0].record_deletions);
    let off = trigger("gapless = true\nrecord_deletions = false").unwrap();
    assert!(!off.triggers[0].record_deletions);
    let refused = trigger("record_deletions = true").unwrap_err().to_string();
    assert!(
        refused.contains("record_deletions") && refused.contains("gapless"),
        "{refused}"
    );
}

#[test]
fn every_option_a_trigger_may_set_is_a_key_of_the_file_spelled_as_the_core_s_table_says() {
    for option in mongo_seq_core::SequenceSpec::trigger_options() {
        let mut raw = RawTrigger::default();
        *raw.sequence_option_mut(option.key)
            .unwrap_or_else(|| panic!("no `[[trigger]]` key for `{}`", option.key)) =
            Some(serde_json::json!(1));
        // The file's key is the snake_case spelling: TOML with it reaches the same field.
        let text = format!(
            "database = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n{} = 1\n",
            option.snake
        );
        let parsed: RawTrigger = toml::from_str(&text).unwrap();
        assert_eq!(
            parsed.sequence_option(option.key),
            raw.sequence_option(option.key),
            "{}",
            option.snake
        );
    }
    assert!(RawTrigger::default().sequence_option("block").is_none());
}

#[test]
fn unique_index_is_on_unless_turned_off() {
    let trigger = |extra: &str| {
        check(&format!(
            "{BASE}[[trigger]]\ndatabase = \"app\"\ncollection = \"orders\"\nfield = \"seq\"\n{extra}\n"
        ))
    };
    assert!(trigger("").unwrap().triggers[0].unique_index);
    assert!(!trigger("unique_index = false").unwrap().triggers[0].unique_index);
    assert!(trigger("unique_index = \"no\"").is_err());
}
