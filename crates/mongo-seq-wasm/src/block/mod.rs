//! Blocks, as the core's `block` module has them: the hi/lo [`allocator`] and the package's
//! [`block_counter`] (one counter's block, its waiting callers, its refill).

pub mod allocator;
pub mod block_counter;
