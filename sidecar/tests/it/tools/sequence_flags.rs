//! The tools' sequence flags: every tool that acts on a series takes every option a
//! `[[trigger]]` may set, as the core's option table names it (table-driven through clap, then
//! through the built binary: `check --format` without a field to write ids into; `void` and
//! `retry` without a config, on the trigger the flags describe).

use crate::common;

use clap::Parser;
use common::*;
use mongo_seq_core::{OptionValue, SequenceSpec};
use mongo_seq_sidecar::cli::{Cli, SequenceFlags, Subcommand};
use mongodb::bson::doc;

/// A value of the kind `value`, as a flag writes it.
fn sample(value: OptionValue) -> &'static str {
    match value {
        OptionValue::Integer => "-3",
        OptionValue::Boolean => "true",
        OptionValue::Text => "yearly",
        OptionValue::Fields => "tenant,region",
        OptionValue::CounterId => r#"{"db": "shop", "coll": "orders"}"#,
    }
}

/// The sequence flags a parsed command line carries.
fn flags(cli: &Cli) -> &SequenceFlags {
    match &cli.subcommand {
        Subcommand::Check(args) => &args.flags.options,
        Subcommand::Void(args) => &args.flags.options,
        Subcommand::Retry(args) => &args.flags.options,
        Subcommand::Counters(args) => &args.options,
        Subcommand::SetNext(args) => &args.options,
        Subcommand::Adopt(args) => &args.options,
        Subcommand::Reset(args) => &args.options,
        other => panic!("no sequence flags: {other:?}"),
    }
}

#[test]
fn every_tool_takes_every_sequence_option_of_the_core_s_table() {
    let tools: [&[&str]; 7] = [
        &["check", "--db", "d", "--collection", "c"],
        &[
            "void",
            "s",
            "1",
            "--reason",
            "r",
            "--db",
            "d",
            "--collection",
            "c",
        ],
        &["retry", "--db", "d", "--collection", "c"],
        &["counters", "--sequence", "s"],
        &["set-next", "s", "5"],
        &["adopt", "s"],
        &["reset", "s"],
    ];
    let options: Vec<_> = SequenceSpec::trigger_options().collect();
    assert_eq!(options.len(), 11, "the options a trigger sets");
    for tool in tools {
        for option in &options {
            let flag = format!("--{}", option.flag);
            let value = sample(option.value);
            let line = [&["mongo-seq"], tool, &[flag.as_str(), value]].concat();
            let cli =
                Cli::try_parse_from(&line).unwrap_or_else(|e| panic!("{line:?} refused: {e}"));
            let expected: Vec<String> = match option.value {
                OptionValue::Fields => value.split(',').map(str::to_owned).collect(),
                _ => vec![value.to_owned()],
            };
            assert_eq!(
                flags(&cli).given(option.key),
                Some(expected.as_slice()),
                "{line:?}"
            );
        }
    }
    // With --config the trigger's options are the file's: a flag beside it is refused, named.
    for tool in [&["void", "s", "1", "--reason", "r"][..], &["retry"][..]] {
        let line = [&["mongo-seq"], tool, &["--config", "x.toml", "--step", "2"]].concat();
        let error = Cli::try_parse_from(&line).unwrap_err().to_string();
        assert!(error.contains("--step"), "{line:?}: {error}");
    }
    // Not a trigger's option: no flag.
    for key in ["block", "refill-ahead", "max-block"] {
        let line = ["mongo-seq", "set-next", "s", "5", &format!("--{key}"), "2"];
        assert!(Cli::try_parse_from(line).is_err(), "{line:?}");
    }
}

/// A yearly series `inv` in a fresh database: `orders` holds `numbers` of 2026 in `field` (and
/// their ids, `INV-2026-000001`, in `invoiceNo`); the counter `inv/2026` is at the last one.
async fn series_2026(label: &str, field: &str, numbers: &[i64]) -> (String, mongodb::Client) {
    let (db, plain, coll) = test_db(label).await;
    let period = format!("{field}Period");
    let documents = numbers.iter().map(|n| {
        doc! { field: n, &period: "2026", "invoiceNo": format!("INV-2026-{n:06}") }
    });
    coll.insert_many(documents).await.unwrap();
    let last = numbers.last().copied().unwrap_or_default();
    plain
        .database(&db)
        .collection("counters")
        .insert_one(doc! { "_id": "inv/2026", "seq": last })
        .await
        .unwrap();
    (db, plain)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_takes_a_format_with_or_without_the_field_of_the_formatted_ids() {
    let (db, plain) = series_2026("check_format", "seq", &[1, 2]).await;
    let uri = mongodb_uri();
    let base = [
        "check",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--sequence",
        "inv",
        "--reset",
        "yearly",
        "--format",
        "INV-{yyyy}-{seq:06}",
    ];
    for extra in [&[][..], &["--format-field", "invoiceNo"][..]] {
        let (code, out, err) = run_bin(&[&base[..], extra].concat(), &[]);
        assert_eq!(code, 0, "{extra:?}: {out}{err}");
        assert!(
            out.contains("  inv/2026: 1..2: 2 held, 0 voided, 0 deleted, 0 unexplained gaps"),
            "{out}"
        );
    }
    // The format is still checked with the sequence, named by its flag.
    let mut bad = base.to_vec();
    bad.pop();
    bad.push("INV-{yyyy}-{seq:06");
    let (code, _, err) = run_bin(&bad, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format"), "{err}");
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn void_without_a_config_takes_the_trigger_as_flags() {
    let (db, plain) = series_2026("void_flags", "no", &[1, 3]).await;
    let uri = mongodb_uri();
    let trigger = [
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--field",
        "no",
        "--reset",
        "yearly",
        "--format",
        "INV-{yyyy}-{seq:06}",
    ];
    let void = |number: &str, extra: &[&str]| {
        let line = [
            &[
                "void",
                "inv",
                number,
                "--period",
                "2026",
                "--reason",
                "cancelled",
            ][..],
            &trigger[..],
            extra,
        ]
        .concat();
        run_bin(&line, &[])
    };
    let (code, out, err) = void("2", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("inv/2026: voided 2 in"), "{out}");
    let ledger = plain
        .database(&db)
        .collection::<mongodb::bson::Document>("mongo_seq_ledger");
    assert_eq!(
        ledger
            .count_documents(doc! { "_id": { "counter": "inv/2026", "number": 2_i64 } })
            .await
            .unwrap(),
        1
    );
    // The flags' trigger says where numbers are held: 1 is.
    let (code, _, err) = void("1", &[]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("NUMBER_HELD"), "{err}");
    // A flag that cannot apply to void is refused, named: a number is held whatever `match` says.
    let (code, _, err) = void("1", &["--match", r#"{"status": "issued"}"#]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("void --match"), "{err}");
    // The options are validated as the file's, named by flag.
    let (code, _, err) = void("1", &["--year-start", "13"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--year-start"), "{err}");
    assert_eq!(
        ledger.count_documents(doc! {}).await.unwrap(),
        1,
        "nothing more written"
    );
    plain.database(&db).drop().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_without_a_config_numbers_the_dead_letters_of_the_trigger_the_flags_describe() {
    let (db, plain, coll) = test_db("retry_flags").await;
    // A document a trigger could not number (no tenant then), repaired since.
    let id = coll
        .insert_one(doc! { "tenant": "a" })
        .await
        .unwrap()
        .inserted_id;
    let trigger = format!("{db}.orders.seq");
    plain
        .database(&db)
        .collection("mongo_seq_state")
        .insert_one(doc! {
            "_id": { "trigger": &trigger, "document": &id },
            "kind": "deadLetter",
            "code": "MISSING_SCOPE_FIELD",
            "reason": "document has no value for scope field `tenant`",
            "since": mongodb::bson::DateTime::now(),
            "attempts": 1_i64,
        })
        .await
        .unwrap();
    let uri = mongodb_uri();
    let line = [
        "retry",
        "--uri",
        &uri,
        "--db",
        &db,
        "--collection",
        "orders",
        "--scope",
        "tenant",
        "--start",
        "100",
    ];
    let (code, out, err) = run_bin(&line, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "{trigger}: 1 dead letters: 1 numbered, 0 gone, 0 still waiting"
        )),
        "{out}"
    );
    let numbered = coll.find_one(doc! { "_id": &id }).await.unwrap().unwrap();
    assert_eq!(numbered.get_i64("seq").ok(), Some(100), "{numbered}");
    // Named otherwise, the trigger has none.
    let (code, out, err) = run_bin(&[&line[..], &["--trigger", "other"]].concat(), &[]);
    assert_eq!((code, out.trim()), (0, "other: no dead letters"), "{err}");
    plain.database(&db).drop().await.ok();
}
