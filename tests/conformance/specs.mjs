// Where the spec files are (fetched by tests/conformance/fetch-specs, never committed) and which
// of their directories the conformance run reads.
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const PYMONGO_VERSION = "4.20.1";
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SPEC_HOME = join(repo, ".tools", "spec-tests", `pymongo-${PYMONGO_VERSION}`);
export const SPEC_ROOT = join(SPEC_HOME, "test");

/** The spec areas mongo-seq relies on (CRUD, change streams, command events, write concerns). */
export const SPEC_DIRECTORIES = ["crud/unified", "change_streams/unified", "command_monitoring", "read_write_concern/operation"];

export const NOTICE = `spec tests from PyMongo ${PYMONGO_VERSION}'s source distribution (MongoDB drivers' specifications, Apache License 2.0; the license text: ${join(".tools", "spec-tests", `pymongo-${PYMONGO_VERSION}`, "LICENSE")})`;
