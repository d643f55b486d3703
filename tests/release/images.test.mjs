// The container images of the release, one OCI archive per architecture, read as a runtime reads
// them (the OCI image layout: index → manifest → config and layers): each says its platform,
// runs the binary of that architecture — the very one in the binary archive — as a numeric
// non-root user, and carries the license and notices next to it. The arm64 image's binary runs
// under qemu-user. (The amd64 image's entrypoint numbering documents is tests/deploy/image.test.mjs,
// on the same build.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TARGETS, VERSION, artifact, files, ok, sha256, untar } from "./support.mjs";

/** The image of an OCI archive: its manifest, config and the root filesystem of its layers. */
function readImage(archive) {
  const layout = untar(archive, "mongo-seq-oci-");
  const blob = (digest) => join(layout, "blobs", ...digest.split(":"));
  assert.equal(JSON.parse(readFileSync(join(layout, "oci-layout"), "utf8")).imageLayoutVersion, "1.0.0");
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
  assert.equal(index.manifests.length, 1, "one image per archive");
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0].digest), "utf8"));
  assert.equal(manifest.mediaType ?? index.manifests[0].mediaType, "application/vnd.oci.image.manifest.v1+json");
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8"));
  for (const { digest } of [manifest.config, ...manifest.layers]) {
    assert.equal(`sha256:${sha256(blob(digest))}`, digest, "every blob matches its digest");
  }
  const rootfs = untar(blob(manifest.layers[0].digest), "mongo-seq-rootfs-");
  for (const layer of manifest.layers.slice(1)) ok("tar", ["-xf", blob(layer.digest), "-C", rootfs]);
  return { index, manifest, config, rootfs };
}

for (const { triple, arch, elf } of TARGETS) {
  test(`image linux/${arch}: its platform, user, entrypoint, and the release's ${arch} binary with its notices`, () => {
    const { index, config, rootfs } = readImage(artifact(`mongo-seq-${VERSION}-image-linux-${arch}.oci.tar`));
    assert.equal(config.os, "linux");
    assert.equal(config.architecture, arch);
    assert.ok(index.manifests[0].annotations["org.opencontainers.image.ref.name"].endsWith(`mongo-seq:${VERSION}-${arch}`), "named by version and architecture");
    assert.equal(config.config.Labels["org.opencontainers.image.version"], VERSION);
    assert.equal(config.config.Labels["org.opencontainers.image.licenses"], "MIT");
    assert.deepEqual(config.config.Entrypoint, ["/usr/local/bin/mongo-seq"]);
    assert.match(config.config.User, /^[1-9]\d*:[1-9]\d*$/, "a numeric non-root user");
    assert.deepEqual(files(rootfs), ["usr/local/bin/mongo-seq", "usr/share/doc/mongo-seq/LICENSE", "usr/share/doc/mongo-seq/THIRD-PARTY-NOTICES.md"]);
    const inImage = join(rootfs, "usr/local/bin/mongo-seq");
    assert.match(ok("file", [inImage]), elf);
    // The binary users download and the one in the image are the same file.
    const archived = join(untar(artifact(`mongo-seq-${VERSION}-${triple}.tar.gz`)), `mongo-seq-${VERSION}-${triple}`, "mongo-seq");
    assert.equal(sha256(inImage), sha256(archived), "the image's binary is the released binary");
    assert.equal(
      readFileSync(join(rootfs, "usr/share/doc/mongo-seq/THIRD-PARTY-NOTICES.md"), "utf8"),
      readFileSync(artifact("THIRD-PARTY-NOTICES-binary.md"), "utf8"),
    );
    if (arch === "arm64") {
      const version = ok("qemu-aarch64", [inImage, "--version"]);
      assert.match(version, new RegExp(`^mongo-seq ${VERSION.replaceAll(".", "\\.")} `));
    }
  });
}
