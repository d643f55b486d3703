//! The operator's tools, as work on MongoDB (or on a sidecar's `/healthz`) with typed results:
//! `check`'s audit and accounts, `report`'s auditor's report (its model and HTML page),
//! `counters`' list and `set-next`, `health`'s HTTP client. The
//! command line (`cli/`) parses their flags, calls them, prints and picks the exit code; the
//! daemon never uses them (what a trigger and a tool share, such as the dead letters, is below
//! both).

pub mod check;
pub mod counters;
pub mod health_check;
pub mod report;
