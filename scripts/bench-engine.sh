#!/usr/bin/env bash
# Engine overhead per turn and per tool call (criterion, crates/bridle-core/benches/engine.rs).
# With BEFORE=<git revision>, that revision's same benchmarks run first as criterion's baseline
# `before` (built in a worktree, into the same target folder), then this tree's are compared to
# it in the same run: each line says how much faster or slower it got. Extra arguments go to
# criterion (a filter, e.g. "tool call").
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
if [ -n "${BEFORE:-}" ]; then
  OLD="$(mktemp -d)"
  trap 'git worktree remove --force "$OLD/src" 2>/dev/null || true; rm -rf "$OLD"' EXIT
  git worktree add -q --detach "$OLD/src" "$BEFORE"
  (cd "$OLD/src" && cargo bench --locked -q -p bridle-core --bench engine -- --noplot --save-baseline before "$@")
  cargo bench --locked -q -p bridle-core --bench engine -- --noplot --baseline before "$@"
else
  cargo bench --locked -q -p bridle-core --bench engine -- --noplot "$@"
fi
