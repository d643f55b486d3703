// `mongo-seq/mongoose` through the package's `require` condition.
import mongoose = require("mongoose");
import seqMongoose = require("mongo-seq/mongoose");

export function usage(): void {
  const schema = new mongoose.Schema({ n: Number });
  schema.plugin(seqMongoose.sequencePlugin, { field: "n" });
}
