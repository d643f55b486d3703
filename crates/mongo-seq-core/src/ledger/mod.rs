//! Accounting for the numbers of a series: [`mod@audit`] (the numbers found in a collection
//! against the grid and the counter), [`entry`] (the ledger's entries: a voided number, a
//! deleted document's number), [`mod@void`] (the plan that voids numbers) and [`deletions`]
//! (the plan a gapless trigger records deleted documents' numbers with). Dead letters and
//! counter definitions belong here too.

pub mod audit;
pub mod deletions;
pub mod entry;
pub mod void;
