//! Routing a call to its counter: for a sequence that resets, the period of an instant and the
//! windows of instants sharing one ([`period_windows`]), found from the host's local dates and
//! kept, so hosts hold no period rule of their own.

pub mod period_windows;
