//! Accounting for the numbers of a series: [`mod@audit`] (the numbers found in a collection
//! against the grid and the counter), [`chronology`] (numbers dated before their predecessor), [`issue_days`] (when a series' numbers were issued: its ends and numbers per day), [`mod@account`] (every number of a counter: held, voided,
//! deleted, a gap or a duplicate, from the ledger's entries),
//! [`dead_letter`] (documents a trigger cannot number) and [`retry_round`] (a round retrying
//! them: what it reads, which are numbered or gone), [`entry`] (the ledger's entries, written
//! and read back: a voided number, a deleted document's number), [`mod@void`] (the plan that voids numbers) and
//! [`deletions`] (the plan a gapless trigger records deleted documents' numbers with), and
//! [`sealed`] (a sealed series' chains read back and verified: `VerifySeal`).

pub mod account;
pub mod audit;
pub mod chronology;
pub mod dead_letter;
pub mod deletions;
pub mod entry;
pub mod issue_days;
pub mod retry_round;
pub mod sealed;
pub mod sealed_records;
pub mod void;
