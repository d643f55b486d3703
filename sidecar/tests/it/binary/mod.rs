//! The built `mongo-seq` run as a daemon process: crash and restart, signals, twins and a
//! paused holder, configuration errors as an operator meets them.

mod config;
mod pause;
mod process;
mod restart;
mod twins;
