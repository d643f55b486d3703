//! Blocks: many numbers reserved per round trip and handed out by a client process.
//! [`allocator`] (the hi/lo [`BlockAllocator`](allocator::BlockAllocator)) and
//! [`block_counter`] (the npm package's [`BlockCounter`](block_counter::BlockCounter): one
//! counter's block, its waiting callers, its refill).

pub mod allocator;
pub mod block_counter;
