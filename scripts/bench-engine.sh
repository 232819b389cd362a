#!/usr/bin/env bash
# Engine overhead per turn and per tool call (criterion, crates/bridle-core/benches/engine.rs).
# With BEFORE=<git revision>, that revision's same benchmarks run first as criterion's baseline
# `before` (built in a worktree, into the same target folder), then this tree's are compared to
# it in the same run: each line says how much faster or slower it got. The other revision builds
# into a target folder of its own (beside this one, kept for next time): cargo tells a workspace
# crate's builds apart by file times, not by folder, so two trees sharing one target folder can
# each take the other's build for their own. Extra arguments go to criterion (a filter, e.g.
# "tool call").
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
if [ -n "${BEFORE:-}" ]; then
  OLD="$(mktemp -d)"
  trap 'git worktree remove --force "$OLD/src" 2>/dev/null || true; rm -rf "$OLD"' EXIT
  git worktree add -q --detach "$OLD/src" "$BEFORE"
  # Both runs keep their results in one place, so the second is compared with the first.
  export CRITERION_HOME="$CARGO_TARGET_DIR/criterion"
  (cd "$OLD/src" && CARGO_TARGET_DIR="$CARGO_TARGET_DIR-before" \
    cargo bench --locked -q -p bridle-core --bench engine -- --noplot --save-baseline before "$@")
  cargo bench --locked -q -p bridle-core --bench engine -- --noplot --baseline before "$@"
else
  cargo bench --locked -q -p bridle-core --bench engine -- --noplot "$@"
fi
