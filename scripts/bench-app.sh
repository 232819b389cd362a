#!/usr/bin/env bash
# The desktop app's benchmarks (issue "The desktop app"): Bridle's release build against a blank
# Tauri 2 app built the same way, then big sessions in the real window. Prints one table (also
# in test-output/bench/app/app.md). Measured, never asserted. Builds are cached outside the
# clone; the first run builds both release apps (tens of minutes on 2 cores).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="$ROOT/test-output/bench/app"
mkdir -p "$OUT"

# What gets built: the commit, and whether the tree had uncommitted changes (read only).
TREE="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
{ git diff --quiet HEAD -- && [ -z "$(git ls-files --others --exclude-standard)" ]; } 2>/dev/null || TREE="$TREE + uncommitted changes"

# BENCH_PROBE=1: where each scroll frame goes instead of the table (scripts/bench-app/probe.mjs),
# in the build at BENCH_APP (a debug build draws the page as fast as a release one); nothing else
# is built then.
npm run build -w ui >/dev/null
if [ "${BENCH_PROBE:-}" = 1 ]; then
  APP="${BENCH_APP:?BENCH_PROBE=1 wants BENCH_APP=/path/to/bridle-app}"
  RUNNER=scripts/bench-app/probe.mjs
  BLANK=""
else
  cargo build --release --locked -p bridle-app
  APP="$CARGO_TARGET_DIR/release/bridle-app"
  RUNNER=scripts/bench-app/run.mjs
  BLANK="$(bash scripts/bench-app/build-blank.sh | tail -n1)"
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bridle-bench-app-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/data" "$WORK/workspace"
# A provider that is never asked (no first-run panel); nothing here sends a message.
printf '[provider]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "bench"\n' >"$WORK/config.toml"
IDS="$(cargo run --release --locked -q -p bridle-core --example seed_app_bench -- "$WORK/data" "$WORK/workspace")"

BENCH_TREE="$TREE" BENCH_BLANK_APP="$BLANK" BENCH_DATA="$WORK/data" BENCH_WORKSPACE="$WORK/workspace" BENCH_CONFIG="$WORK/config.toml" \
  BENCH_IDS="$IDS" E2E_RUNNER="$RUNNER" \
  bash scripts/e2e-gui.sh "$APP" "$OUT"
