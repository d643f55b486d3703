// Prints a vector replay's result; a failure exits non-zero with every mismatch listed.
import process from "node:process";

export function report({ total, failures }) {
  if (total === 0) {
    console.error("no vector cases found");
    process.exit(1);
  }
  if (failures.length > 0) {
    console.error(`${failures.length} of ${total} vector cases failed:\n${failures.join("\n")}`);
    process.exit(1);
  }
  console.log(`vectors: ${total} cases passed`);
}
