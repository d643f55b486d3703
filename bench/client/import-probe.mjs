// Prints how long importing a package takes in a fresh process (Node, Deno or Bun).
//   <runtime> bench/client/import-probe.mjs mongodb|mongo-seq|mongo-seq-after-mongodb
const what = (globalThis.Deno?.args ?? globalThis.process?.argv.slice(2))[0];
if (what === "mongo-seq-after-mongodb") await import("mongodb"); // the driver is loaded already
const started = performance.now();
await import(what === "mongodb" ? "mongodb" : "mongo-seq");
console.log(`IMPORT_MS ${performance.now() - started}`);
