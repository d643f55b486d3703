//! The sidecar's library in the test process: triggers and the daemon (`server::run`) with the
//! test's client, against the test server.

mod backfill;
mod commands;
mod concerns;
mod counter_id;
mod ha;
mod health;
mod interface;
mod metrics;
mod on_match;
mod pipeline;
mod post_images;
mod read_ahead;
mod sealed;
mod sharding;
mod stream;
mod stream_cut;
