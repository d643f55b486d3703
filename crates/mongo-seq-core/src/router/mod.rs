//! Routing a call to its counter: for a sequence that resets, the period of an instant and the
//! windows of instants sharing one ([`period_windows`]), found from the host's local dates and
//! kept; and a sequence's counters in a process, the one a call takes from chosen by its scope
//! and instant ([`series_counters`]), so hosts hold no period rule and no map of counters.

pub mod period_windows;
pub mod series_counters;
