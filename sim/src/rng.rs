//! The schedule's one source of randomness: a ChaCha8 stream seeded by the schedule's seed
//! (portable: the same seed draws the same numbers on every machine).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
pub struct SimRng(ChaCha8Rng);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        Self(ChaCha8Rng::seed_from_u64(seed))
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.0.random::<f64>() < p
    }

    /// Uniform in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        self.0.random_range(low..=high)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.0.random_range(0..n)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            return None;
        }
        let i = self.below(items.len());
        items.get(i)
    }

    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// Picks an index with the given weights.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        if total == 0 {
            return 0;
        }
        let mut draw = self.between(0, total - 1);
        for (i, w) in weights.iter().enumerate() {
            let w = u64::from(*w);
            if draw < w {
                return i;
            }
            draw -= w;
        }
        weights.len() - 1
    }
}
