#!/usr/bin/env bash
# apply_patch on a 100,000-line file: the same change (three lines near the middle, and a
# function renamed near the end) as a unified diff and as a `*** Begin Patch` patch, each through
# `bridle tool apply_patch`, side by side in one hyperfine run (the file is put back before every
# run), then the peak memory of one run of each (GNU time's maximum resident set size).
. "$(dirname "$0")/bench-cli.sh"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/data"
python3 - "$WORK" <<'EOF'
import json, sys
work = sys.argv[1]
lines = [f"def f{i}(x):\n    return x + {i}\n" for i in range(50_000)]
with open(f"{work}/original.py", "w") as f:
    f.write("".join(lines))
mid = 25_000
unified = (
    "--- a/big.py\n+++ b/big.py\n"
    f"@@ -{2 * mid + 1},2 +{2 * mid + 1},2 @@\n def f{mid}(x):\n-    return x + {mid}\n+    return x - {mid}\n"
    f"@@ -99999,2 +99999,2 @@\n-def f49999(x):\n+def last(x):\n     return x + 49999\n"
)
codex = (
    "*** Begin Patch\n*** Update File: big.py\n"
    f"@@ def f{mid}(x):\n-    return x + {mid}\n+    return x - {mid}\n"
    "@@\n-def f49999(x):\n+def last(x):\n     return x + 49999\n*** End of File\n*** End Patch\n"
)
for name, patch in [("unified", unified), ("codex", codex)]:
    with open(f"{work}/{name}.json", "w") as f:
        json.dump({"patch": patch}, f)
EOF
# --args - reads stdin; hyperfine gives none, so the arguments come through a shell redirect.
call() { printf "sh -c '%s --data-dir %s --workspace %s tool apply_patch --mode auto --args - < %s > /dev/null'" \
  "$BRIDLE" "$WORK/data" "$WORK/ws" "$WORK/$1.json"; }
hyperfine -N --warmup 3 --min-runs 20 --prepare "cp $WORK/original.py $WORK/ws/big.py" \
  --export-markdown "$OUT/patch.md" \
  -n "unified diff, 100k lines" "$(call unified)" \
  -n "*** Begin Patch, 100k lines" "$(call codex)"
for format in unified codex; do
  cp "$WORK/original.py" "$WORK/ws/big.py"
  /usr/bin/time -f "$format: peak memory %M KiB, %e s" \
    sh -c "$BRIDLE --data-dir $WORK/data --workspace $WORK/ws tool apply_patch --mode auto --args - < $WORK/$format.json > $WORK/$format.out"
  grep -q '"isError":false' "$WORK/$format.out" || { echo "$format: the patch did not apply: $(cat "$WORK/$format.out")" >&2; exit 1; }
done
cmp <(cp "$WORK/original.py" "$WORK/ws/big.py"; "$BRIDLE" --data-dir "$WORK/data" --workspace "$WORK/ws" tool apply_patch --mode auto --args - < "$WORK/unified.json" >/dev/null; cat "$WORK/ws/big.py") \
    <(cp "$WORK/original.py" "$WORK/ws/big.py"; "$BRIDLE" --data-dir "$WORK/data" --workspace "$WORK/ws" tool apply_patch --mode auto --args - < "$WORK/codex.json" >/dev/null; cat "$WORK/ws/big.py") \
  && echo "both formats leave the same file"
