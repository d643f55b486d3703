// The same declarations through the package's `require` condition.
import mongoSeq = require("mongo-seq");
import type { Db } from "mongodb";

export function usage(db: Db): mongoSeq.Sequence {
  const spec = new mongoSeq.core.SequenceSpec({ name: "x", block: 10 });
  const range = spec.options();
  void range;
  spec.free();
  return new mongoSeq.Sequences(db).sequence("ids");
}
