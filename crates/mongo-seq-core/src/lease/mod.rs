//! A trigger's lease: which of several sidecars is the active one, and the epoch that fences
//! the others. [`document`] (the lease document and the plan that takes, renews and releases
//! it) and [`acquire`] (acquiring with an epoch above every epoch its counters carry).

pub mod acquire;
pub mod document;
