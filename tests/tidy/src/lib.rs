//! Tidy tests: ARCHITECTURE.md's invariants, checked on the repository's text, so that breaking
//! one fails `make test` instead of waiting for a reviewer (as rust-analyzer's tidy tests do).
//!
//! This crate depends on nothing and compiles nothing of the product:
//! `cargo test -p mongo-seq-tidy` runs in seconds. Crates are found by listing folders, so a
//! crate added later is held to the workspace-wide rules (no import circle, …) without editing a
//! list. The one home of tidy tests: the crates hold none of their own.

pub mod source;

#[cfg(test)]
mod architecture;
#[cfg(test)]
mod core;
#[cfg(test)]
mod error_tables;
#[cfg(test)]
pub(crate) mod imports;
#[cfg(test)]
mod library;
#[cfg(test)]
mod shells;
#[cfg(test)]
mod workspace;
