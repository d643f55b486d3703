// deploy/README.md ("Connections") says what the binary answers to connection strings it cannot
// use; each case fails before any network traffic (nothing listens on port 1), so the messages
// are checked here exactly as an operator would see them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { root, run, BIN } from "./support.mjs";

// Line breaks of the Markdown source do not count.
const guide = readFileSync(join(root, "deploy/README.md"), "utf8").replace(/\s+/g, " ");

// [uri, message, exit status]: 2 for what the connection string refuses (a usage error, before
// anything connects; the TLS files it names are read then).
const cases = [
  ["mongodb://127.0.0.1:1/?authMechanism=MONGODB-AWS", "MONGODB-AWS auth is only supported with the aws-auth feature flag", 2],
  ["mongodb://u:p@127.0.0.1:1/?tls=true&tlsCertificateKeyFilePassword=x", "the cert-key-password feature must be enabled to specify tlsCertificateKeyFilePassword", 2],
  ["mongodb://127.0.0.1:1/?tls=true&tlsCAFile=/nonexistent/ca.pem", "tlsCAFile /nonexistent/ca.pem cannot be read: No such file or directory", 2],
];

for (const [uri, message, status] of cases) {
  test(`refused as documented: ${uri}`, () => {
    assert.ok(guide.includes(message), `deploy/README.md quotes "${message}"`);
    const result = run(BIN, ["counters", "--uri", uri, "--counters", "app.counters"], { timeout: 30_000 });
    assert.equal(result.status, status, result.stderr);
    for (const dump of ["Kind:", "labels:", "server response:"]) assert.ok(!result.stderr.includes(dump), `no driver dump: ${result.stderr}`);
    assert.ok(result.stderr.includes(message), `${uri}:\n${result.stderr}`);
    assert.ok(!result.stderr.includes(":p@"), "the password is masked");
  });
}
