//! Accounting for the numbers of a series: [`mod@audit`] (the numbers found in a collection
//! against the grid and the counter). Voided numbers, deletion records, dead letters and
//! counter definitions belong here too.

pub mod audit;
