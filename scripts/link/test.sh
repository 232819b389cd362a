#!/usr/bin/env bash
# Tests scripts/link/cc with stand-ins for `cc` and `nm` (on PATH): a link with no launch order is
# passed through as it is; one with a launch order is linked, read, and linked again with the
# order resolved to the binary's names: listed names as they are, a name the binary no longer has
# (its hash changed) by its name without the hash, every instance of it; nothing else. The same
# rule counts the match the app benchmark reports (launch-order.awk's mode=count).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
cat >"$T/cc" <<'STUB'
#!/bin/sh
echo "$*" >>"$CALLS"
STUB
cat >"$T/nm" <<'STUB'
#!/bin/sh
cat <<'NM'
0000000000001000 T _ZN3foo3baz17h1111111111111111E
0000000000002000 t sqlite3Malloc.part.0
0000000000003000 T _ZN3foo3bar17haaaaaaaaaaaaaaaaE
0000000000004000 T _ZN3foo5other17h2222222222222222E
0000000000005000 t _ZN3foo3baz17h3333333333333333E.123
0000000000006000 D _ZN3foo4data17h4444444444444444E
NM
STUB
chmod +x "$T/cc" "$T/nm"
printf '%s\n' _ZN3foo3bar17haaaaaaaaaaaaaaaaE _ZN3foo3baz17hbbbbbbbbbbbbbbbbE sqlite3Malloc.part.0 \
  _ZN3foo4gone17hccccccccccccccccE >"$T/order.txt"
export CALLS="$T/calls"
fail() { echo "scripts/link/cc: $1" >&2; exit 1; }

PATH="$T:$PATH" bash "$ROOT/scripts/link/cc" -o "$T/plain" a.o -lc
[ "$(cat "$CALLS")" = "-o $T/plain a.o -lc" ] || fail "a plain link was changed: $(cat "$CALLS")"

: >"$CALLS"
PATH="$T:$PATH" bash "$ROOT/scripts/link/cc" -o "$T/app" a.o "-Wl,--symbol-ordering-file=$T/order.txt" -lc
expected="-o $T/app a.o -lc
-o $T/app a.o -lc -Wl,--symbol-ordering-file=$T/app.launch-order"
[ "$(cat "$CALLS")" = "$expected" ] || fail "the two links were not as expected: $(cat "$CALLS")"
expected="_ZN3foo3bar17haaaaaaaaaaaaaaaaE
_ZN3foo3baz17h1111111111111111E
_ZN3foo3baz17h3333333333333333E.123
sqlite3Malloc.part.0"
[ "$(cat "$T/app.launch-order")" = "$expected" ] || fail "the resolved order is wrong: $(cat "$T/app.launch-order")"
counted="$("$T/nm" | awk -v list="$T/order.txt" -v mode=count -f "$ROOT/scripts/link/launch-order.awk")"
[ "$counted" = "2 1 4" ] || fail "the match was counted as $counted, not 2 as listed, 1 by name, of 4"
echo "scripts/link/cc: a plain link passes through; a launch order resolves to the binary's names"
