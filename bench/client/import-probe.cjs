// The cold start of mongo-seq inside an application bundled to one CommonJS file (esbuild,
// platform node: AWS Lambda, Vercel and Netlify functions ship this way), with the driver
// required first: a bundle evaluates each module where it is first required, so the time
// around `require("mongo-seq")` is the package's own (decompressing, compiling and
// initialising its Wasm core). Bundled and run by bench/client/cold-start.mjs.
const driverStarted = performance.now();
require("mongodb");
const started = performance.now();
require("mongo-seq");
console.log(`IMPORT_MS ${performance.now() - started} DRIVER_MS ${started - driverStarted}`);
