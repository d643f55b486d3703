//! A trigger's lease: which of several sidecars is the active one, and the epoch that fences
//! the others. [`document`] (the lease document and the plan that takes, renews and releases
//! it), [`acquire`] (acquiring with an epoch above every epoch its counters carry) and
//! [`twin`] (telling a live process with the caller's own owner id from a dead one).

pub mod acquire;
pub mod document;
pub mod twin;
