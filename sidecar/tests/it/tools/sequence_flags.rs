//! The tools' sequence flags: every tool that acts on a series takes every option a
//! `[[trigger]]` may set, as the core's option table names it (table-driven through clap; through
//! the built binary in `check.rs` (`--format`), `ledger.rs` (`void`) and `dead_letters.rs`
//! (`retry`)).

use clap::Parser;
use mongo_seq_core::{OptionValue, SequenceSpec};
use mongo_seq_sidecar::cli::{Cli, SequenceFlags, Subcommand};

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
        Subcommand::Check(args) => &args.audited.flags.options,
        Subcommand::Report(args) => &args.audited.flags.options,
        Subcommand::Void(args) => &args.flags.options,
        Subcommand::Retry(args) => &args.flags.options,
        Subcommand::Counters(args) => &args.options,
        Subcommand::SetNext(args) => &args.options,
        Subcommand::Adopt(args) => &args.options,
        Subcommand::Rewind(args) => &args.options,
        other => panic!("no sequence flags: {other:?}"),
    }
}

#[test]
fn every_tool_takes_every_sequence_option_of_the_core_s_table() {
    let tools: [&[&str]; 8] = [
        &["check", "--db", "d", "--collection", "c"],
        &["report", "--db", "d", "--collection", "c", "--json", "-"],
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
        &["rewind", "s"],
    ];
    let options: Vec<_> = SequenceSpec::trigger_options().collect();
    assert_eq!(options.len(), 12, "the options a trigger sets");
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
