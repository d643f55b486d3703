# The two commands of the README: `make demo` and `make test`. Both install what they need.
SHELL := /bin/bash
export DENO_NO_UPDATE_CHECK := 1
export CARGO_TERM_COLOR ?= never

.PHONY: demo test setup test-rust test-js build-wasm test-e2e

demo: setup
	demo/run

test: setup test-rust build-wasm test-js test-e2e

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
