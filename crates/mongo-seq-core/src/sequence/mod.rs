//! What a sequence is: its options ([`options`]: raw options → [`SequenceSpec`](options::SequenceSpec)),
//! its name ([`name`]), its scoped counter ids ([`scope`], read back by [`counter_id`]), the
//! formatted ids beside its numbers ([`mod@format`]), the field paths numbers live in
//! ([`field`]) and the size limits of one call ([`limits`]); periodic series: the periods
//! ([`period`]) of local dates ([`calendar`]), the instants hosts turn into them ([`instant`])
//! and the zone they do it in ([`time_zone`]).
//!
//! Everything here is a pure rule: no command, no plan.

pub mod calendar;
pub mod counter_field;
pub mod counter_id;
pub mod field;
pub mod format;
pub mod instant;
pub mod limits;
pub mod name;
pub mod options;
pub mod period;
pub mod scope;
pub mod spelling;
pub mod time_zone;
