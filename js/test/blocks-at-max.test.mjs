// Blocks near `max`: every number up to the bound is handed out before SEQUENCE_EXHAUSTED, by
// any number of Sequence objects (processes) and whatever the block grew to; a refused
// nextMany keeps the numbers in hand and reports the count asked for and what is left for it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Sequences } from "mongo-seq";
import { useMongo } from "./support.mjs";

const mongo = useMongo();

/** Rejects with SEQUENCE_EXHAUSTED: its `{ requested, available }`. */
async function refused(promise) {
  const error = await promise.then(
    (numbers) => assert.fail(`expected SEQUENCE_EXHAUSTED, got ${numbers}`),
    (error) => error,
  );
  assert.equal(error.code, "SEQUENCE_EXHAUSTED", error.message);
  const { requested, available } = error.details;
  return { requested, available };
}

test("two Sequence objects taking in turn hand out every number up to max, however many each takes", async () => {
  const db = mongo.freshDb("max_two");
  for (const [round, counts] of [[1, 1], [3, 3], [1, 3], [7, 2], [20, 1]].entries()) {
    const name = `ids${round}`;
    // Two Sequences objects: two processes' blocks of one counter (blocks grow under load).
    const holders = [0, 1].map(() => new Sequences(db).sequence(name, { max: 100, block: 10 }));
    const handed = [];
    const refusedOnce = [false, false];
    const empty = [false, false];
    for (let turn = 0; turn < 1000 && !(empty[0] && empty[1]); turn++) {
      const index = turn % 2;
      const count = refusedOnce[index] ? 1 : counts[index];
      try {
        handed.push(...(await holders[index].nextMany(count)));
      } catch (error) {
        assert.equal(error.code, "SEQUENCE_EXHAUSTED", error.message);
        assert.equal(error.details.requested, count, error.message);
        assert.ok(error.details.available < count, error.message);
        refusedOnce[index] = true;
        empty[index] = count === 1;
      }
    }
    handed.sort((a, b) => a - b);
    assert.deepEqual(handed, Array.from({ length: 100 }, (_, i) => i + 1), `taking ${counts}`);
    assert.equal((await db.collection("counters").findOne({ _id: name })).seq, 100);
  }
});

test("a refused nextMany keeps the numbers in hand and counts them as left", async () => {
  const ids = new Sequences(mongo.freshDb("max_keeps")).sequence("ids", { block: 10, max: 12 });
  assert.equal(await ids.next(), 1);
  assert.deepEqual(await refused(ids.nextMany(20)), { requested: 20, available: 11 });
  assert.equal(await ids.current(), 10, "nothing reserved");
  assert.equal(await ids.next(), 2, "2..10 were kept");
  assert.deepEqual(await ids.nextMany(10), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(await refused(ids.next()), { requested: 1, available: 0 });
});

test("a grown block never inflates what a refusal reports", async () => {
  const ids = new Sequences(mongo.freshDb("max_grown")).sequence("ids", { block: 10, max: 15 });
  assert.equal(await ids.next(), 1);
  assert.deepEqual(await ids.nextMany(10), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  // Refills less than a second apart: the block grew (20, then 40); 12..15 are in hand.
  assert.deepEqual(await refused(ids.nextMany(10)), { requested: 10, available: 4 });
  assert.deepEqual(await ids.nextMany(4), [12, 13, 14, 15]);
  assert.deepEqual(await refused(ids.nextMany(4)), { requested: 4, available: 0 });
});
