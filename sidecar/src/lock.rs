//! The one way the sidecar takes a lock.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, also when it is poisoned (a thread panicked while holding it).
///
/// Why not panic: every value the sidecar keeps behind a mutex (a trigger's `/healthz` entry,
/// the instance id, token ages, the documents already reported as unnumberable, a fence's
/// deadline) is changed by one assignment, insert or `max` under the lock, so a panic cannot
/// leave it half-updated; and a panic in one trigger's task must not turn every later
/// `/healthz`, scrape or fence check of the others into a panic too.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
