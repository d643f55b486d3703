//! A deterministic model of a MongoDB replica set, as the manual documents it, executing the
//! commands mongo-seq sends. No clock and no randomness: the simulation decides what happens
//! when (replication steps, failovers, truncation) and calls into the model.

pub mod aggregate;
pub mod cluster;
pub mod collection;
pub mod error;
pub mod exec;
pub mod find;
pub mod query;
pub mod state;
pub mod stream;
pub mod update;
pub mod value;

#[cfg(test)]
mod tests;

pub use cluster::{Cluster, Node, Role, WriteStatus};
pub use collection::IndexSpec;
pub use error::{ModelError, ServerError};
pub use exec::{execute, Executed, Operation, ReadLevel, Request, Response, Statement, WriteError};
pub use state::{Entry, Op, State, Ts};
pub use stream::{Batch, Position};
