// `make bench` flags → validated options and the sizes of quick and full mode.
export const SECTIONS = ["client", "mongoose", "processes", "startup", "sidecar", "sidecar-batching", "latency", "oplog"];

export const USAGE = `usage: node bench/run.mjs [--full] [--only SECTION,…] [--rounds N]   (make bench BENCH_ARGS="…")

Benchmarks mongo-seq against what people use instead, side by side in one invocation, on the
embedded test server (or MONGODB_URI, a replica set). Prints a markdown table and one line per
figure, \`BENCH <name> <value> <unit>\`. Progress goes to stderr.

  --full           larger sizes (quick mode, the default, takes under 5 minutes)
  --only LIST      sections to run, comma-separated: ${SECTIONS.join(", ")}
  --rounds N       rounds of each interleaved comparison (default 3 quick, 5 full; the
                   sidecar-batching section: 1 quick, 3 full, unless given)
  -h, --help       this text`;

const QUICK = {
  rounds: 3,
  // Numbers taken per row of the client comparison: enough round trips for every block size.
  clientNumbers: { 1: 400, 25: 10_000, 100: 20_000, 1000: 50_000 },
  clientNumbersRtt: { 1: 300, 25: 7_500, 100: 15_000, 1000: 50_000 },
  // Interleaved pairs of short chunks (tutorial, block 1) behind client.block1.c1.vs_tutorial.
  block1Pairs: 40,
  // Numbers taken by callers doing a round trip between numbers (refillAhead's comparison).
  busyNumbers: 2_000,
  warmCalls: 100_000,
  profileReservations: 3_000,
  processNumbers: { tutorial: 250, 1: 250, 100: 5_000 },
  mongooseDocs: 2_000,
  coldStartSamples: 7,
  drainDocs: 4_000,
  drainCapSeconds: 8,
  liveDocs: 3_000,
  batchingDocs: 20_000,
  batchingRounds: 1,
  latencySeconds: 3,
  oplogSizes: [0, 5_000, 20_000],
  full: false,
};

const FULL = {
  rounds: 5,
  clientNumbers: { 1: 1_000, 25: 25_000, 100: 50_000, 1000: 200_000 },
  clientNumbersRtt: { 1: 600, 25: 15_000, 100: 30_000, 1000: 200_000 },
  block1Pairs: 100,
  busyNumbers: 5_000,
  warmCalls: 500_000,
  profileReservations: 10_000,
  processNumbers: { tutorial: 1_000, 1: 1_000, 100: 50_000 },
  mongooseDocs: 10_000,
  coldStartSamples: 15,
  drainDocs: 20_000,
  drainCapSeconds: 30,
  liveDocs: 20_000,
  batchingDocs: 20_000,
  batchingRounds: 3,
  latencySeconds: 15,
  oplogSizes: [0, 10_000, 50_000, 100_000],
  full: true,
};

/** @returns {typeof QUICK & { sections: Set<string> }} */
export function parseOptions(argv) {
  let full = false;
  let only = null;
  let rounds = null;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case "--full":
        full = true;
        break;
      case "--only": {
        only = value().split(",").map((s) => s.trim()).filter(Boolean);
        const unknown = only.filter((s) => !SECTIONS.includes(s));
        if (unknown.length || only.length === 0) {
          throw new UsageError(`--only expects sections among ${SECTIONS.join(", ")}; got ${JSON.stringify(only.join(","))}`);
        }
        break;
      }
      case "--rounds": {
        const text = value();
        rounds = Number(text);
        if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new UsageError(`--rounds expects an integer 1..100, got ${JSON.stringify(text)}`);
        break;
      }
      case "-h":
      case "--help":
        throw new UsageError("");
      default:
        throw new UsageError(`unknown argument ${JSON.stringify(flag)}`);
    }
  }
  const sizes = full ? FULL : QUICK;
  return { ...sizes, rounds: rounds ?? sizes.rounds, batchingRounds: rounds ?? sizes.batchingRounds, sections: new Set(only ?? SECTIONS) };
}

export class UsageError extends Error {}
