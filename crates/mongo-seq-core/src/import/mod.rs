//! Adopting the counters other plugins keep (mongoose-sequence, mongoose-auto-increment and
//! @typegoose/auto-increment): [`request`] (what to import) and [`counters`] (the
//! `ImportCounters` plan and its report).

pub mod counters;
pub mod request;
