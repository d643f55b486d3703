// mongo-seq from CommonJS: `require` gives the same package (one Wasm instance) as `import`.
// Ticket numbers per project: a scoped sequence keeps one counter per project.
const { MongoClient } = require("mongodb");
const { Sequences } = require("mongo-seq");

async function main() {
  const client = new MongoClient(process.env.MONGODB_URI ?? "mongodb://127.0.0.1:27017");
  try {
    const db = client.db(process.env.EXAMPLE_DB ?? "mongo_seq_example");
    const tickets = new Sequences(db).sequence("tickets", { scope: ["project"], format: "{seq}" });
    for (const project of ["api", "web", "api"]) {
      const number = await tickets.next({ project });
      console.log(`${project}-${tickets.format(number)}`); // api-1, web-1, api-2
    }
    console.log(`counter ids: ${tickets.counterId({ project: "api" })}, ${tickets.counterId({ project: "web" })}`);
  } finally {
    await client.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
