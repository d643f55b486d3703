# The two commands of the README: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
export DENO_NO_UPDATE_CHECK := 1
export CARGO_TERM_COLOR ?= never

.PHONY: demo test setup test-rust test-js build-wasm test-e2e chaos-ci chaos

demo: setup
	demo/run

test: setup test-rust build-wasm test-js test-e2e chaos-ci

setup:
	scripts/setup

test-rust:
	cargo test --workspace

build-wasm:
	cargo build -p mongo-seq-core --target wasm32-unknown-unknown --release

test-js:
	node --test tests/node/

# End-to-end tests of the sidecar binary, driven from Node (tests/e2e/).
test-e2e:
	cargo build -p mongo-seq
	node --test tests/e2e/

# Chaos test (tests/chaos/run.mjs): writers + a deleter, 3 sidecars SIGKILLed at random, connections
# cut through a TCP proxy; fails on any unnumbered document, duplicate, or gap of the gapless
# trigger. CI size (~30 s) in `make test`; full size (100,000 documents) with `make chaos`.
chaos-ci:
	cargo build -p mongo-seq
	node tests/chaos/run.mjs --docs 10000 --rate 500 --proxy

chaos: setup
	cargo build -p mongo-seq
	node tests/chaos/run.mjs --docs 100000 --rate 1000 --proxy $(CHAOS_ARGS)
