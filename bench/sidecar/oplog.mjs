// The embedded server's own cost of an empty change-stream getMore as its oplog grows: the
// unpatched fake rescanned its whole oplog at every getMore (tests/FAKE-SERVER.md row 6); since
// patch 10 a read starts at the stream's position, so the figure should stay flat.
// Measured on a fresh server: a stream on one collection, inserts into another, then the median
// of 20 empty getMores, at each oplog size.
import { MongoClient } from "mongodb";
import { withServer } from "../lib/servers.mjs";
import { median } from "../lib/stats.mjs";
import { orders, insertBacklog } from "./documents.mjs";

function label(size) {
  return size >= 1000 ? `${size / 1000}k` : String(size);
}

export async function runOplog({ sizes, report }) {
  await withServer("oplog", async ({ uri, db, embedded }) => {
    const client = await MongoClient.connect(uri);
    try {
      const database = client.db(db);
      const stream = database.collection("watched").watch();
      await stream.tryNext();
      let written = 0;
      for (const size of sizes) {
        await insertBacklog(database.collection("other"), orders(size - written));
        written = size;
        while ((await stream.tryNext()) !== null); // nothing for this stream, but be sure
        const times = [];
        for (let i = 0; i < 20; i++) {
          const started = performance.now();
          await stream.tryNext();
          times.push(performance.now() - started);
        }
        report.add(`server.getmore_ms.oplog${label(size)}`, median(times), "ms",
          `${embedded ? "embedded server" : "MONGODB_URI"}: an empty change-stream getMore after ${size.toLocaleString("en")} other writes`);
      }
      await stream.close();
    } finally {
      await client.close();
    }
  });
}
