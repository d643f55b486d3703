//! Accounting for the numbers of a series: [`mod@audit`] (the numbers found in a collection
//! against the grid and the counter), [`entry`] (the ledger's entries: a voided number, a
//! deleted document's number) and [`mod@void`] (the plan that voids numbers). Dead letters and
//! counter definitions belong here too.

pub mod audit;
pub mod entry;
pub mod void;
