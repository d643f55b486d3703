//! The C allocator's setting for this process: one malloc arena (glibc).
//!
//! glibc gives threads arenas of their own (up to 8 per core). A batch's memory is allocated by
//! whichever tokio worker runs the trigger's task at that moment and freed by whichever runs it
//! later, so each arena ends up holding its own high-water mark of the same batches: measured
//! with `bench/sidecar/compare-builds.mjs` (docs/benchmarks.md), one arena instead of the
//! default takes the sidecar's peak RSS from 27–33 MiB to 20–23 MiB at batch 1000, at the same
//! CPU per document (its threads spend little time in malloc). A `MALLOC_ARENA_MAX` in the
//! environment wins. Other C libraries (musl: the container image) have no arenas.

/// Sets one arena, unless `MALLOC_ARENA_MAX` says otherwise. Call before any thread starts.
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: `mallopt` only changes a setting of glibc's allocator; it is called before the
        // process starts any thread.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}
