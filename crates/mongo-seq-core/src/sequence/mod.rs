//! What a sequence is: its options ([`options`]: raw options → [`SequenceSpec`](options::SequenceSpec)),
//! its name ([`name`]), its scoped counter ids ([`scope`], read back by [`counter_id`]), the
//! formatted ids beside its numbers ([`mod@format`]), the field paths numbers live in
//! ([`field`]) and the size limits of one call ([`limits`]).
//!
//! Everything here is a pure rule: no command, no plan. Periodic series (a period in the
//! counter id and in formats) belong here too.

pub mod counter_field;
pub mod counter_id;
pub mod field;
pub mod format;
pub mod limits;
pub mod name;
pub mod options;
pub mod scope;
