# The two commands of the README: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
export DENO_NO_UPDATE_CHECK := 1
export CARGO_TERM_COLOR ?= never

.PHONY: demo test setup test-rust test-js build-wasm build-js conformance test-e2e chaos-ci chaos sim-ci sim-long image test-deploy release test-release bench

demo: setup build-js
	cargo build -q -p mongo-seq-sidecar
	demo/run

test: setup test-rust build-wasm build-js test-js conformance test-e2e chaos-ci sim-ci test-deploy test-release

setup:
	scripts/setup

test-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	cargo test --workspace
	# The Rust library's documentation: its examples ran above (`cargo test --workspace` runs
	# `cargo test --doc -p mongo-seq`); its docs build without a warning (broken links, …).
	RUSTDOCFLAGS=-Dwarnings cargo doc -q -p mongo-seq --no-deps

# The Wasm module (core + shims) → js/wasm/; then the npm package's bundles → js/dist/.
build-wasm:
	js/scripts/build-wasm

build-js: build-wasm
	node js/scripts/build-js.mjs

test-js: build-js
	cargo build -p mongo-seq-tcp-proxy
	node --test tests/node/*.test.mjs js/test/*.test.mjs tests/runtimes/*.test.mjs tests/packaging/*.test.mjs tests/examples/*.test.mjs
	npm run typecheck --workspace js

# The drivers' unified-format spec tests (CRUD, change streams, command events) against the embedded
# test server, or MONGODB_URI (tests/conformance/, README "Conformance"); the model's side is in
# sim-ci. Fails on a failure tests/FAKE-SERVER.md does not explain. About 10 s.
conformance:
	tests/conformance/fetch-specs
	node tests/conformance/run.mjs

# End-to-end tests of the sidecar binary, driven from Node (tests/e2e/).
test-e2e:
	cargo build -p mongo-seq-sidecar
	node --test tests/e2e/

# Chaos test (tests/chaos/run.mjs): writers + a deleter, 3 sidecars SIGKILLed at random, connections
# cut through a TCP proxy; fails on any unnumbered document, duplicate, or gap of the gapless
# trigger. CI size (~30 s) in `make test`; full size (100,000 documents) with `make chaos`.
chaos-ci:
	cargo build -p mongo-seq-sidecar -p mongo-seq-tcp-proxy
	node tests/chaos/run.mjs --docs 10000 --rate 500 --proxy --timeout-s 300

chaos: setup
	cargo build -p mongo-seq-sidecar -p mongo-seq-tcp-proxy
	node tests/chaos/run.mjs --docs 100000 --rate 1000 --proxy $(CHAOS_ARGS)

# Deterministic simulation (sim/, README "Simulation"): the product's own client and trigger code
# against a seeded model of a replica set with its faults. CI size (about a minute) and the mutant
# check (each known protocol mutant must be caught; a rare one on schedules focused on it, which
# the real code also runs) in `make test`, after the model against the
# drivers' spec tests (`model_conformance`: MODEL-CONFORMANCE passed=… simplified=… skipped=…); `make sim-long` is the long
# run whose figures are in docs/simulation.md (SIM_ARGS="--schedules N --seed S" to vary).
SIM_CI_SCHEDULES ?= 1500
SIM_CI_FOCUSED ?= 200
# Built with the `sim` profile (optimized, without the release profile's LTO: it builds in a
# fraction of the time and runs about as fast).
sim-ci:
	cargo build --profile sim -q -p mongo-seq-sim
	tests/conformance/fetch-specs
	target/sim/model_conformance
	target/sim/mongo-seq-sim --schedules $(SIM_CI_SCHEDULES)
	target/sim/mongo-seq-sim --focus stale-incarnations --schedules $(SIM_CI_FOCUSED)
	target/sim/mongo-seq-sim --mutants --schedules 1000

sim-long:
	cargo build --profile sim -q -p mongo-seq-sim
	target/sim/mongo-seq-sim --schedules 1000000 $(SIM_ARGS)

# The container image (sidecar/Containerfile): the static musl release binary in a FROM scratch
# image, built with podman; prints the binary's and the image's size (scripts/build-image).
image: setup
	scripts/build-image

# Deployment (tests/deploy/): the image's entrypoint numbers documents (run from its exported
# root filesystem as its user; with `podman run` too where that works), the Kubernetes manifests
# (kubernetes-validate), the systemd unit (systemd-analyze), the Prometheus rules (promtool) and
# the Grafana dashboard (its metrics scraped from a running sidecar).
test-deploy: image
	cargo build -p mongo-seq-sidecar
	node --test tests/deploy/

# A release (scripts/release): the npm tarball, the crates as `cargo package` makes them (built
# from their packaged sources), static binaries and OCI images for x86_64 and arm64, the
# third-party notices, CycloneDX SBOMs and SHA256SUMS, in target/release-artifacts/.
release: setup build-js
	scripts/setup-release
	scripts/release

# The release checked as the registries and users check it (tests/release/): npm publish
# --dry-run, publint, arethetypeswrong, the crates' metadata, the arm64 binary under qemu-user
# (--version, --check-config, numbering against the embedded server), the images' contents, the
# licenses (cargo-about, the npm tree) and the notices in every artifact. Reuses the builds of
# `make image` and `make release`.
test-release: release
	node --test tests/release/

# Benchmarks (bench/run.mjs, results in docs/benchmarks.md): mongo-seq against the tutorial,
# mongoose-sequence and the Atlas-trigger recipe, side by side, ratios; the Rust crate's lines
# (bench/rust: blocks vs the tutorial in Rust, warm next()) in the client section. Quick mode (< 5 min) by
# default; `make bench BENCH_ARGS=--full` for larger sizes. Release builds of the sidecar and
# the latency proxy; their output goes to stderr, so stdout is the report alone.
bench:
	@$(MAKE) --no-print-directory setup build-js >&2
	@cargo build --release -p mongo-seq-sidecar -p mongo-seq-tcp-proxy -p mongo-seq-bench
	@node bench/run.mjs $(BENCH_ARGS)
