#!/usr/bin/env bash
# The hands, side by side with reference tools in one run (sourced by scripts/bench.sh):
# grep_search against ripgrep, read_file of a 4 GiB file against head, edit_file at level 4 on a
# 100k-line file against sed. Release builds; hyperfine for wall time, GNU time for peak RSS.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="${OUT:-$ROOT/test-output/bench}"
WORK="${BENCH_WORK:-${TMPDIR:-/tmp}/bridle-bench}"
mkdir -p "$OUT" "$WORK/ws" "$WORK/data"
REL="$CARGO_TARGET_DIR/release"

step "release build of the CLI and the grep example"
cargo build --locked --release -p bridle-cli -p bridle-core --bin bridle --example grep_bench
BRIDLE="$REL/bridle"
tool() { "$BRIDLE" tool "$1" --args "$2" --mode bypass --workspace "$WORK/ws" --data-dir "$WORK/data"; }

# 1. grep_search vs rg on a large real tree (the crate sources cargo downloaded).
TREE="${BENCH_TREE:-$HOME/.cargo/registry/src}"
step "grep_search vs rg on $TREE ($(du -sh "$TREE" | cut -f1))"
RG_FLAGS=(--hidden --no-require-git -g '!.git' -g '!.hg' -g '!.svn' -g '!.jj' -n --no-heading)
for pattern in 'fn\s+new' 'unsafe'; do
  rg_count=$(rg "${RG_FLAGS[@]}" -c "$pattern" "$TREE" | awk -F: '{s+=$NF} END {print s+0}')
  ours=$("$REL/examples/grep_bench" "$TREE" "$pattern")
  echo "pattern '$pattern': rg $rg_count matching lines; grep_search: $ours"
  hyperfine -N -w 2 -r 10 --export-json "$OUT/grep-$(echo "$pattern" | tr -c 'a-z' '_').json" \
    -n rg "rg ${RG_FLAGS[*]} '$pattern' $TREE" \
    -n grep_search "$REL/examples/grep_bench $TREE '$pattern'" | grep -E 'Time|±|faster|rg|grep_search' || true
done

# 2. read_file of the first lines of a 4 GiB text file.
BIG="$WORK/ws/big.log"
if [ "$(stat -c %s "$BIG" 2>/dev/null || echo 0)" -ne 4294967296 ]; then
  step "writing a 4 GiB text file"
  # yes ends on SIGPIPE when head has its 4 GiB; that is success here.
  (set +o pipefail; yes 'a line of a very large log file, the same again and again' | head -c 4294967296 > "$BIG")
fi
step "read_file of 20 lines of a 4 GiB file vs head"
hyperfine -N -w 3 -r 20 -n "bridle tool read_file" "$BRIDLE tool read_file --args '{\"path\":\"big.log\",\"end_line\":20}' --mode bypass --workspace $WORK/ws --data-dir $WORK/data" \
  -n "head -n 20" "head -n 20 $BIG" | grep -E 'Time|±|faster|read_file|head' || true
rss=$(/usr/bin/time -f %M "$BRIDLE" tool read_file --args '{"path":"big.log","end_line":20}' --mode bypass --workspace "$WORK/ws" --data-dir "$WORK/data" 2>&1 >/dev/null | tail -1)
echo "read_file peak RSS: ${rss} KB"

# 3. edit_file whose match needs level 4 (indentation drift) on a 100k-line file.
step "edit_file at level 4 on a 100k-line file vs sed"
python3 - "$WORK/ws/orig.rs" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(100_000):
        f.write(f"        let value_{i} = compute({i});\n")
PY
ARGS='{"path":"edit.rs","old_text":"let value_77777 = compute(77777);\nlet value_77778 = compute(77778);","new_text":"let value_77777 = compute(1);\nlet value_77778 = compute(2);"}'
hyperfine -N -w 2 -r 20 --prepare "cp $WORK/ws/orig.rs $WORK/ws/edit.rs" \
  -n "bridle tool edit_file (level 4)" "$BRIDLE tool edit_file --args '$ARGS' --mode bypass --workspace $WORK/ws --data-dir $WORK/data" \
  -n "sed -i (exact line)" "sed -i 's/compute(77777);/compute(1);/' $WORK/ws/edit.rs" | grep -E 'Time|±|faster|edit_file|sed' || true
cp "$WORK/ws/orig.rs" "$WORK/ws/edit.rs"
tool edit_file "$ARGS" | grep -o '"output":"[^"]*"'
