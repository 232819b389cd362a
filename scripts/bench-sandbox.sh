#!/usr/bin/env bash
# The shell sandbox's cost per bash call, side by side in one hyperfine run: the same
# `bridle tool bash` call under bubblewrap, under Landlock and unsandboxed, for `true` and for
# `git status` on a 10,000-file repository. The difference between rows is the overhead (every
# row pays the same process start, config, store and audit). With BEFORE=<git revision>, the
# same call under bwrap and Landlock by that revision's bridle are rows too (built once in a
# worktree), e.g.
# BEFORE=bdfccf5 for bwrap before the user namespace, capability drop and seccomp filter.
. "$(dirname "$0")/bench-cli.sh"
if [ -n "${BEFORE:-}" ]; then
  OLD="$(mktemp -d)"
  git worktree add -q --detach "$OLD/src" "$BEFORE"
  # Its own target folder: cargo tells a workspace crate's builds apart by file times, so two
  # trees sharing one folder can each take the other's build for their own.
  (cd "$OLD/src" && CARGO_TARGET_DIR="$CARGO_TARGET_DIR-before" cargo build --locked --release -q -p bridle-cli)
  cp "$CARGO_TARGET_DIR-before/release/bridle" "$OLD/bridle-before"
  git worktree remove --force "$OLD/src"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK" ${OLD:+"$OLD"}' EXIT
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
call() { # variant command [binary]
  printf "%s --data-dir %s --workspace %s tool bash --mode auto --approve --args '{\"command\":\"%s\"}'" \
    "${3:-$BRIDLE}" "$WORK/data-$1" "$REPO" "$2"
}
for command in "true" "git status"; do
  BEFORE_ROWS=()
  if [ -n "${BEFORE:-}" ]; then
    BEFORE_ROWS=(-n "$command, bwrap before ($BEFORE)" "$(call bwrap "$command" "$OLD/bridle-before")"
                 -n "$command, landlock before ($BEFORE)" "$(call landlock "$command" "$OLD/bridle-before")")
  fi
  hyperfine -N --warmup 5 --min-runs 30 --export-markdown "$OUT/sandbox-${command// /-}.md" \
    "${BEFORE_ROWS[@]}" \
    -n "$command, bwrap" "$(call bwrap "$command")" \
    -n "$command, landlock" "$(call landlock "$command")" \
    -n "$command, unsandboxed" "$(call none "$command")"
done
cat "$OUT"/sandbox-*.md
