#!/usr/bin/env bash
# Review figures (issue 40): the core (listing a turn of 200 files / 5,000 hunks; rejecting one
# hunk of a 100,000-line file) and the window (Changes showing that turn, a reject by click),
# in the debug app under the GUI test environment. Measured, never asserted.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="$ROOT/test-output/bench"
mkdir -p "$OUT"
cargo bench --locked -p bridle-core --bench review | tee "$OUT/review.txt"
npm run build -w ui >/dev/null
cargo build --locked -p bridle-app
E2E_RUNNER=scripts/bench-review/run.mjs bash scripts/e2e-gui.sh "$CARGO_TARGET_DIR/debug/bridle-app" "$OUT/review" | tee -a "$OUT/review.txt"
