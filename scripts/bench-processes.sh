#!/usr/bin/env bash
# Background processes, side by side in one run of `bridle run` each (a scripted model on aimock,
# bubblewrap): the time from a background start to its answer (it answers after 2 s when the
# process runs on, at once when it ends), against a foreground `true`; and Bridle's memory while
# 8 background processes run for 60 s, idle (`sleep`) against busy (`yes`, writing as fast as
# they can: each keeps only its last 1 MiB).
. "$(dirname "$0")/bench-cli.sh"
WORK="$(mktemp -d /var/tmp/bridle-bench-proc.XXXXXX)"
MOCK=""
trap '[ -n "$MOCK" ] && kill "$MOCK" 2>/dev/null; [ -z "${KEEP:-}" ] && rm -rf "$WORK"' EXIT
SECONDS_BUSY="${SECONDS_BUSY:-60}"

# The model: "<kind>" starts 8 background processes running `<command>`, then waits in a
# foreground `sleep`, then answers; "quick" runs `true` in the foreground and a background `true`.
python3 - "$WORK/fixtures" "$SECONDS_BUSY" <<'PY'
import json, os, sys
folder, wait = sys.argv[1], int(sys.argv[2])
os.makedirs(folder)
fixtures = []
# Each command differs (the loop guard ends a turn at the fourth identical call).
for kind, command in [("idle", "exec sleep 60{}"), ("busy", "exec yes {}")]:
    calls = [{"id": f"{kind}{i}", "name": "bash", "arguments": {"command": command.format(i), "background": True}} for i in range(8)]
    fixtures.append({"match": {"userMessage": kind, "hasToolResult": False}, "response": {"toolCalls": calls}})
    fixtures.append({"match": {"userMessage": kind, "toolCallId": f"{kind}7"},
                     "response": {"toolCalls": [{"id": f"{kind}w", "name": "bash", "arguments": {"command": f"sleep {wait}", "timeout_secs": wait + 30}}]}})
    fixtures.append({"match": {"userMessage": kind, "toolCallId": f"{kind}w"}, "response": {"content": "done"}})
quick = [{"id": "q1", "name": "bash", "arguments": {"command": "true"}},
         {"id": "q2", "name": "bash", "arguments": {"command": "true", "background": True}}]
fixtures.append({"match": {"userMessage": "quick", "hasToolResult": False}, "response": {"toolCalls": quick}})
fixtures.append({"match": {"userMessage": "quick", "toolCallId": "q2"}, "response": {"content": "done"}})
json.dump({"fixtures": fixtures}, open(os.path.join(folder, "bench.json"), "w"))
PY
node node_modules/@copilotkit/aimock/dist/cli.js -p 0 -h 127.0.0.1 -f "$WORK/fixtures" > "$WORK/aimock.log" 2>&1 &
MOCK=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/aimock.log" && break; sleep 0.1; done
URL="$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/aimock.log" | head -1)"
mkdir -p "$WORK/ws" "$WORK/data"
printf 'mode = "auto"\n[sandbox]\nbackend = "bwrap"\n' > "$WORK/data/config.toml"

# Starts `bridle run PROMPT` in the background; its pid is in $PID.
run() {
  "$BRIDLE" run "$1" --json --provider openai --model m --base-url "$URL/v1" --data-dir "$WORK/data" --workspace "$WORK/ws" \
    > "$WORK/$1.jsonl" 2> "$WORK/$1.err" &
  PID=$!
}

# The answer times of each bash call, in milliseconds, from the results' `durationMs`.
durations() {
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") == "toolCallEnd":
        d = (e["result"].get("data") or {})
        print(("background" if d.get("background") else "foreground"), d.get("durationMs"))
PY
}

run quick
wait "$PID"
echo "answer time of one call (ms):"
durations "$WORK/quick.jsonl" | sed 's/^/  /'

for kind in idle busy; do
  run "$kind"
  pid="$PID"
  samples=()
  while kill -0 "$pid" 2>/dev/null; do
    rss="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [ -n "$rss" ] && samples+=("$rss")
    sleep 1
  done
  wait "$pid" || true
  starts="$(durations "$WORK/$kind.jsonl" | awk '$1 == "background" {s += $2; n++} END {printf "%.0f", s / n}')"
  printf '%s\n' "${samples[@]}" | awk -v kind="$kind" -v starts="$starts" '
    { v[NR] = $1; if ($1 > max) max = $1 }
    END {
      # The first 16 s are the 8 starts (2 s each); then all 8 run.
      printf "8 %s background processes: mean start answer %s ms; Bridle RSS once all run %.1f MiB, %d s later %.1f MiB, peak %.1f MiB\n",
        kind, starts, v[18] / 1024, NR - 18, v[NR] / 1024, max / 1024
    }'
done
