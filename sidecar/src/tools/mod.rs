//! The operator's tools, as work on MongoDB (or on a sidecar's `/healthz`) with typed results:
//! `check`'s audit, `counters`' list and `set-next`, `health`'s HTTP client, dead letters
//! (stored and retried: by a trigger's lease holder, and by `retry`). The command line (`cli/`)
//! parses their flags, calls them, prints and picks the exit code.

pub mod accounts;
pub mod check;
pub mod counters;
pub mod dead_letters;
pub mod health_check;
