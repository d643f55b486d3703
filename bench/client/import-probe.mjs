// Prints how long importing a package takes in a fresh process (Node, Deno or Bun).
//   <runtime> bench/client/import-probe.mjs mongodb|mongo-seq|mongo-seq-after-mongodb [file]
// After the driver (`mongo-seq-after-mongodb`), also the import plus the package's first call
// into its core (`new Sequences(db).sequence(…)`, no I/O), which loads the Wasm module; the
// client is made between the two, untimed (it schedules work of its own). `file`: a bundle of
// the package to import instead of `mongo-seq` (docs/benchmarks.md compares two builds).
// `mongo-seq-after-mongodb-io`: the same with 50 ms of waiting between the import and the first
// call, as an application connecting to MongoDB first would (untimed: the import plus the call).
const [what, file] = globalThis.Deno?.args ?? globalThis.process?.argv.slice(2);
const afterIo = what === "mongo-seq-after-mongodb-io";
const driver = what === "mongo-seq-after-mongodb" || afterIo ? await import("mongodb") : undefined;
// CPU time (the process's, all threads) beside the wall clock: on a loaded machine the wall clock
// also counts the waits for a core; the CPU time does not.
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const cpuStarted = cpu();
const started = performance.now();
const pkg = await import(what === "mongodb" ? "mongodb" : (file ?? "mongo-seq"));
const importMs = performance.now() - started;
const importCpuMs = cpu() - cpuStarted;
if (driver === undefined) {
  console.log(`IMPORT_MS ${importMs} IMPORT_CPU_MS ${importCpuMs}`);
} else {
  const db = new driver.MongoClient("mongodb://127.0.0.1:9/").db("cold_start");
  if (afterIo) await new Promise((resolve) => setTimeout(resolve, 50));
  const callCpuStarted = cpu();
  const callStarted = performance.now();
  new pkg.Sequences(db).sequence("cold_start");
  const callMs = performance.now() - callStarted;
  const callCpuMs = cpu() - callCpuStarted;
  console.log(`IMPORT_MS ${importMs} FIRST_CALL_MS ${importMs + callMs} IMPORT_CPU_MS ${importCpuMs} FIRST_CALL_CPU_MS ${importCpuMs + callCpuMs}`);
}
