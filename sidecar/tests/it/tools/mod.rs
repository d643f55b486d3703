//! The operators' commands of the built `mongo-seq` (`check`, `counters`, `set-next`, `void`,
//! `retry`, `import`, `reset`, `adopt`, `health`, `--version`, `completions`) against a
//! database the test prepared, some beside a running sidecar.

mod accounted;
mod any_sequence;
mod check_and_counters;
mod definitions;
mod ledger;
mod operator_cli;
mod retry_gapless;
mod sequence_flags;
mod series_tools;
