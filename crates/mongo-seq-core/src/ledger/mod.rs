//! Accounting for the numbers of a series: [`mod@audit`] (the numbers found in a collection
//! against the grid and the counter), [`mod@account`] (every number of a counter: held, voided,
//! deleted, a gap or a duplicate, from the ledger's entries as [`recorded`] reads them) and
//! [`dead_letter`] (documents a trigger cannot number).

pub mod account;
pub mod audit;
pub mod dead_letter;
pub mod recorded;
