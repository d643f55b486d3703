//! The simulator's integration tests, one test binary: a seed replays exactly
//! (`determinism`), and seeds that once found a product bug run clean (`regressions`).

mod determinism;
mod regressions;
