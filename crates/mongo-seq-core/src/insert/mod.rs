//! The npm package's numbered inserts: [`numbered`] (`insertOne`/`insertMany` with numbers from
//! the caller's counters), [`optimistic`] (the tutorial's insert loop, with [`backoff`] windows)
//! and [`fields`] (where an insert may write its number).

pub mod backoff;
pub mod fields;
pub mod numbered;
pub mod optimistic;
