// The baseline: MongoDB's tutorial ("Create an Auto-Incrementing Sequence Field"): a counter
// document inserted up front, then one findAndModify {$inc: {seq: 1}} per number.

/** Inserts the tutorial's counter `{ _id: name, seq: 0 }` and returns its getNextSequence(). */
export async function tutorialSequence(counters, name) {
  await counters.insertOne({ _id: name, seq: 0 });
  return async function getNextSequence() {
    const counter = await counters.findOneAndUpdate({ _id: name }, { $inc: { seq: 1 } }, { returnDocument: "after" });
    return counter.seq;
  };
}
