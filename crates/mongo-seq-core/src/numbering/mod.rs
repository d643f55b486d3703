//! Numbering documents after they are written (the sidecar's triggers): a trigger's numbering
//! ([`spec`]), a batch of documents ([`batch`]), gapless groups over the intent protocol
//! ([`gapless`], [`intent`]), moving counters past a collection's numbers before a backfill
//! ([`seed_from_existing`]) and the backfill's reads ([`backfill`]), the change stream a trigger
//! reads ([`change_stream`]) and when to store its resume token ([`checkpoint`]), a number held
//! twice where the unique index should be ([`held_twice`]); numbering the documents that match
//! a filter, on demand ([`assign`]); which documents belong to a series and which counter's
//! number each holds ([`series`]).

pub mod assign;
pub mod backfill;
pub mod batch;
pub mod change_stream;
pub mod checkpoint;
pub mod complete;
pub mod gapless;
pub mod held_twice;
pub mod intent;
pub mod pending;
pub mod sealing;
pub mod seed_from_existing;
pub mod series;
pub mod spec;
