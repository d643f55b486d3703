//! One counter document (`{ _id: <counter id>, seq: <last issued> }`) and the plans on it:
//! reading it ([`document`], [`current`]), reserving numbers ([`reservation`], giving a
//! [`range`]), moving it ([`set_next`], [`seed`]: `seedFromMax`, [`seed_collection`]:
//! `seedFromCollection`, which finds the [`largest`] number a collection holds); the counters
//! of dated documents ([`dated`]: the `localDates` step of a sequence that resets); on a
//! sharded cluster, the [`shard_key`] its collection may have; which counters only a sidecar
//! may move ([`kept`]). Every write of a counter carries
//! the sequence's [`definition`], which [`adopt`] rewrites on purpose.

pub mod adopt;
pub mod current;
pub mod dated;
pub mod definition;
pub mod document;
pub mod kept;
pub mod largest;
pub mod range;
pub mod reservation;
pub mod rewind;
pub mod seed;
pub mod seed_collection;
pub mod set_next;
pub mod shard_key;
