// The cold start of mongo-seq inside an application bundled to one CommonJS file (esbuild,
// platform node: AWS Lambda, Vercel and Netlify functions ship this way), with the driver
// required first: a bundle evaluates each module where it is first required, so the time
// around `require("mongo-seq")` is the package's own; then that plus its first call into the
// core (`new Sequences(db).sequence(…)`, no I/O), which loads the Wasm module (decompressing,
// compiling and initialising it). Bundled and run by bench/client/cold-start.mjs.
// CPU time (the process's, all threads) beside the wall clock, as in import-probe.mjs.
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const driverStarted = performance.now();
const { MongoClient } = require("mongodb");
const cpuStarted = cpu();
const started = performance.now();
const { Sequences } = require("mongo-seq");
const importMs = performance.now() - started;
const db = new MongoClient("mongodb://127.0.0.1:9/").db("cold_start");
const callStarted = performance.now();
new Sequences(db).sequence("cold_start");
const firstCallMs = importMs + performance.now() - callStarted;
console.log(`IMPORT_MS ${importMs} FIRST_CALL_MS ${firstCallMs} FIRST_CALL_CPU_MS ${cpu() - cpuStarted} DRIVER_MS ${started - driverStarted}`);
