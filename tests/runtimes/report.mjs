// Prints a vector replay's result; a failure exits non-zero with every mismatch listed.
import process from "node:process";

export function report({ total, failures }, label = "vectors") {
  if (total === 0) {
    console.error(`${label}: no cases found`);
    process.exit(1);
  }
  if (failures.length > 0) {
    console.error(`${label}: ${failures.length} of ${total} cases failed:\n${failures.join("\n")}`);
    process.exit(1);
  }
  console.log(`${label}: ${total} cases passed`);
}
