#!/usr/bin/env bash
# Many sessions at one desk (issue 39): making a session's worktree of a 10,000-file repository
# against a bare `git worktree add`, archiving and restoring 1,000 changed files, and the
# window's host (its Rust side) with 1, 4 and 8 idle sessions. Measured, never asserted.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="$ROOT/test-output/bench"
mkdir -p "$OUT"
cargo run --release --locked -q -p bridle-core --example desk_bench | tee "$OUT/desk.md"
