//! The core's `router`: the periods of instants ([`period_windows`]) and a sequence's counters
//! in this process, the one a call takes from ([`series_counters`]).

pub mod period_windows;
pub mod series_counters;
