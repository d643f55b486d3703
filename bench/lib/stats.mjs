// Small statistics and timing helpers shared by the benchmark's sections.

/** The median of `values` (numbers); NaN for none. */
export function median(values) {
  return percentile(values, 50);
}

/** The `p`-th percentile (nearest rank) of `values`; NaN for none. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Milliseconds since an arbitrary origin, sub-millisecond precision. */
export const now = () => performance.now();

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `take(i)` from `callers` concurrent loops until `count` calls have started. */
export async function concurrently(callers, count, take) {
  let started = 0;
  const loop = async () => {
    while (started < count) {
      const i = started++;
      await take(i);
    }
  };
  await Promise.all(Array.from({ length: callers }, loop));
}

/** Polls `check()` every `everyMs` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor(check, { everyMs = 20, timeoutMs = 60_000, what = "condition" } = {}) {
  const deadline = now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
