//! The sans-I/O protocol: the commands a shell runs with its MongoDB driver, the replies it
//! feeds back, and the plans that turn one into the next; [`cluster_time`] (a write's position in history).
//!
//! [`command`] (what to run, serialized as canonical Extended JSON), [`reply`] (what came
//! back, and which server errors are replies: [`duplicate_key`]), [`plan`] (the [`Plan`](plan::Plan)
//! trait and its caller loop), [`machine`] (the one [`MachinePlan`](machine::MachinePlan) every
//! plan is: a state machine with its pending step), [`concern`] (the read and write concern of
//! every command) and [`note`] (what plans report for logs and metrics); with the simulator's
//! `mutants` feature, `conformance` (rules checked on every plan as it runs).

pub mod cluster_time;
pub mod command;
pub mod concern;
#[cfg(feature = "mutants")]
pub mod conformance;
pub mod duplicate_key;
pub mod machine;
pub mod note;
pub mod plan;
pub mod reply;
