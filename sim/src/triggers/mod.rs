//! Sidecars numbering inserted documents in the simulated world, with what a deployment does to
//! them: applications insert, users delete at any moment, the watched collection is dropped
//! (and recreated by the next insert), sidecars crash at any await point and restart (a new
//! incarnation with the same instance id, as a restarted pod), pause past their lease, run with
//! skewed clocks. Two triggers: `orders` (default mode) and `ledger` (gapless).
//!
//! The sidecars' processes are [`processes`]'s, what happens to their collections
//! [`workload`]'s; quiescence waits for [`settled`], then the checks read the surviving history
//! ([`check`]).

mod checks;
mod processes;
mod settled;
mod workload;

pub use checks::{check, check_reported, check_token_age};
pub use processes::{supervise, Sidecars};
pub use settled::{all_numbered, deletions_read};
pub use workload::{deleter, writer};
