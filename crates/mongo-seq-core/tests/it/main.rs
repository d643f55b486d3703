//! The core's integration tests, one test binary: the shared vector files replayed natively
//! (`vectors`; `seal_vectors`, seal.json), no panic on any input (`no_panic*`, property tests)
//! and the order in which completions take numbers (`completion_order`).

mod common;

mod completion_order;
mod no_panic;
mod no_panic_gapless;
mod no_panic_protocols;
mod no_panic_seals;
mod seal_vectors;
mod vectors;
