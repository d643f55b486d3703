//! Strategies shared by the property tests.

use proptest::prelude::*;

/// Integers around the edges the core must handle: the i64 limits, zero, ±1, 2^53, small values.
pub fn edge_int() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0),
        Just(1),
        Just(-1),
        Just(1 << 53),
        -20i64..20,
        any::<i64>(),
    ]
}
