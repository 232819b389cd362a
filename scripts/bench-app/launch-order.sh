#!/usr/bin/env bash
# Makes the launch order again (src-tauri/launch-order.txt; see src-tauri/build.rs): builds the
# release app, runs it under callgrind (valgrind) in the GUI test environment from its start to
# the idle window, and writes the functions that ran. Run it after changes to what a launch does;
# then rebuild the release app, and `npm run bench` shows the idle memory it gives.
# Usage: scripts/bench-app/launch-order.sh  (about 3 minutes after the build)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
. scripts/env.sh
command -v valgrind >/dev/null || { echo "missing valgrind (apt-get install valgrind): only this script needs it" >&2; exit 2; }
npm run build -w ui >/dev/null
cargo build --release --locked -p bridle-app
E2E_RUNNER=scripts/bench-app/launch-order.mjs \
  bash scripts/e2e-gui.sh "$CARGO_TARGET_DIR/release/bridle-app" "$ROOT/test-output/bench/launch-order"
