#!/usr/bin/env bash
# The whole suite, from nothing: set up, build once, then every test — UI unit tests, Rust unit
# and integration tests (engine against wiremock, CLI against a real aimock), lints, the
# architecture check, and the GUI end-to-end tests on the real app under Xvfb + WebDriver.
# Benchmarks are not part of it (npm run bench).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
started=$(date +%s)

step "setup"
bash scripts/setup.sh

step "llama.cpp server for the local-server tests (built once into the cache)"
bash scripts/setup-llama.sh

step "MCP servers from PyPI for the MCP tests (a venv in the cache)"
bash scripts/setup-mcp.sh

step "OpenTelemetry protobufs from PyPI for the telemetry tests' receiver (a venv in the cache)"
bash scripts/setup-otel.sh

step "ui: typecheck, unit tests, build"
npm run build -w ui
npm test -w ui

# One feature set for every cargo invocation (all with --workspace), so nothing compiles twice.
step "rust: build"
cargo build --workspace --all-targets --locked

step "rust: format and lints"
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "pins: the tauri crate matches the npm @tauri-apps packages"
bash scripts/check-pins.sh

step "the linker: a plain link passes through, the release app's launch order resolves (scripts/link/cc)"
bash scripts/link/test.sh

step "architecture: bridle-core does not depend on tauri"
if cargo tree --locked -p bridle-core -e normal --prefix none | grep -qE '^tauri( |-)'; then
  echo "bridle-core depends on tauri; keep the core free of the shell" >&2
  exit 1
fi

step "rust: tests"
# Without backtraces a failing test's message stays in the tail of the log, where CI's summary
# shows it (a backtrace of a hundred lines pushed it out of the summary once).
RUST_BACKTRACE=0 cargo test --workspace --locked

step "gui: end-to-end on the real app"
bash scripts/e2e-gui.sh "$BRIDLE_APP" "$ROOT/test-output/e2e"

echo
echo "all tests passed in $(( $(date +%s) - started )) s"
