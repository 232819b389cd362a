#!/usr/bin/env bash
# Makes the launch order again (src-tauri/launch-order.txt; see src-tauri/build.rs): builds the
# release app, runs it under callgrind (valgrind) in the GUI test environment from its start to
# the idle window, writes the functions that ran, and builds the release app again with them
# first. Run it after changes to what a launch does, or when the app benchmark finds fewer than 90 %
# of the list's names as listed; `npm run bench -- app` then shows the idle memory it gives.
# Usage: scripts/bench-app/launch-order.sh  (about 3 minutes between the two builds)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
. scripts/env.sh
command -v valgrind >/dev/null || { echo "missing valgrind (apt-get install valgrind): only this script needs it" >&2; exit 2; }
npm run build -w ui >/dev/null
cargo build --release --locked -p bridle-app
E2E_RUNNER=scripts/bench-app/launch-order.mjs \
  bash scripts/e2e-gui.sh "$CARGO_TARGET_DIR/release/bridle-app" "$ROOT/test-output/bench/launch-order"
cargo build --release --locked -p bridle-app
