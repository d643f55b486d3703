//! The tools' sequence flags: every tool that takes a sequence's options as flags takes every
//! option a `[[trigger]]` may set, as the core's option table names it (table-driven through
//! clap, then through the built binary: `check --format` without a field to write ids into).

mod common;

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
        Subcommand::Check(args) => &args.options,
        Subcommand::Counters(args) => &args.options,
        Subcommand::SetNext(args) => &args.options,
        Subcommand::Adopt(args) => &args.options,
        Subcommand::Reset(args) => &args.options,
        other => panic!("no sequence flags: {other:?}"),
    }
}

#[test]
fn every_tool_takes_every_sequence_option_of_the_core_s_table() {
    let tools: [&[&str]; 5] = [
        &["check", "--db", "d", "--collection", "c"],
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
    // Not a trigger's option: no flag.
    for key in ["block", "refill-ahead", "max-block"] {
        let line = ["mongo-seq", "set-next", "s", "5", &format!("--{key}"), "2"];
        assert!(Cli::try_parse_from(line).is_err(), "{line:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_takes_a_format_with_or_without_the_field_of_the_formatted_ids() {
    let (db, plain, coll) = test_db("check_format").await;
    coll.insert_many([
        doc! { "seq": 1_i64, "seqPeriod": "2026", "invoiceNo": "INV-2026-000001" },
        doc! { "seq": 2_i64, "seqPeriod": "2026", "invoiceNo": "INV-2026-000002" },
    ])
    .await
    .unwrap();
    plain
        .database(&db)
        .collection("counters")
        .insert_one(doc! { "_id": "inv/2026", "seq": 2_i64 })
        .await
        .unwrap();
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
