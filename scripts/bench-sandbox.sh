#!/usr/bin/env bash
# The shell sandbox's cost per bash call, side by side in one hyperfine run: the same
# `bridle tool bash` call under bubblewrap, under Landlock and unsandboxed, for `true` and for
# `git status` on a 10,000-file repository. The difference between rows is the overhead (every
# row pays the same process start, config, store and audit).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="${OUT:-$ROOT/test-output/bench}"
mkdir -p "$OUT"
cargo build --locked --release -q -p bridle-cli
BRIDLE="$CARGO_TARGET_DIR/release/bridle"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
REPO="$WORK/repo"
mkdir -p "$REPO"
(
  cd "$REPO"
  git init -q
  for d in $(seq 0 99); do
    mkdir -p "src/m$d"
    for f in $(seq 0 99); do echo "fn f$f() {}" > "src/m$d/f$f.rs"; done
  done
  git add -A
  git -c user.name=bench -c user.email=bench@example.com commit -qm "10k files"
)
for variant in bwrap landlock none; do
  mkdir -p "$WORK/data-$variant"
  case $variant in
    none) printf '[sandbox]\nenabled = false\n' ;;
    *) printf '[sandbox]\nbackend = "%s"\n' "$variant" ;;
  esac > "$WORK/data-$variant/config.toml"
done
call() { # variant command
  printf "%s --data-dir %s --workspace %s tool bash --mode auto --approve --args '{\"command\":\"%s\"}'" \
    "$BRIDLE" "$WORK/data-$1" "$REPO" "$2"
}
for command in "true" "git status"; do
  hyperfine -N --warmup 5 --min-runs 30 --export-markdown "$OUT/sandbox-${command// /-}.md" \
    -n "$command, bwrap" "$(call bwrap "$command")" \
    -n "$command, landlock" "$(call landlock "$command")" \
    -n "$command, unsandboxed" "$(call none "$command")"
done
cat "$OUT"/sandbox-*.md
