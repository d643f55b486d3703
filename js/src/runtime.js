// What the package asks of the runtime (Node, Deno, Bun) besides the driver, reached without an
// `import` of Node's modules: each `import "node:…"` costs a fresh ES module some 0.3–0.5 ms of
// the package's cold start (bench/client/cold-start.mjs), while these are needed only later,
// if at all. `process.getBuiltinModule` is in Node ≥ 20.16, Deno 2 and Bun.

/** A promise resolved in the next turn of the event loop (after this turn's callers). */
export const afterThisTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A promise resolved after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The machine's host name (a voided number's default `by`). */
export const hostname = () => builtin("node:os").hostname();

/** One of the runtime's built-in modules (`node:zlib`, …), loaded synchronously when first asked. */
export function builtin(name) {
  const module = globalThis.process?.getBuiltinModule?.(name);
  if (module === undefined) throw new Error(`mongo-seq needs process.getBuiltinModule("${name}") (Node ≥ 20.16, Deno 2, Bun)`);
  return module;
}
