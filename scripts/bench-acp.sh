#!/usr/bin/env bash
# What ACP adds, side by side in one run against aimock (the model answers at once): the time from
# starting `bridle run --json` to its first delta, against the time from starting `bridle acp` to
# the first agent_message_chunk (initialize, session/new, session/prompt, all in that time); the
# time from session/prompt to the first chunk in a warm session; and the memory of an idle
# `bridle acp` with one session open. Medians of 10.
. "$(dirname "$0")/bench-cli.sh"
WORK="$(mktemp -d /var/tmp/bridle-bench-acp.XXXXXX)"
MOCK=""
trap '[ -n "$MOCK" ] && kill "$MOCK" 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/fixtures" "$WORK/ws" "$WORK/data"
echo '{"fixtures": [{"match": {"userMessage": "say hello"}, "response": {"content": "Hello from the model"}}]}' > "$WORK/fixtures/f.json"
node node_modules/@copilotkit/aimock/dist/cli.js -p 0 -h 127.0.0.1 -f "$WORK/fixtures" > "$WORK/aimock.log" 2>&1 &
MOCK=$!
for _ in $(seq 100); do grep -q "listening on" "$WORK/aimock.log" && break; sleep 0.1; done
URL="$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/aimock.log" | head -1)"
printf 'mode = "ask"\n[provider]\nkind = "openai"\nbase_url = "%s/v1"\nmodel = "m"\n' "$URL" > "$WORK/data/config.toml"

OPENAI_API_KEY=sk-bench python3 - "$BRIDLE" "$WORK" <<'PY'
import json, os, statistics, subprocess, sys, time
bridle, work = sys.argv[1], sys.argv[2]
data, ws = os.path.join(work, "data"), os.path.join(work, "ws")

def run_first_delta():
    start = time.perf_counter()
    p = subprocess.Popen([bridle, "run", "say hello", "--json", "--data-dir", data, "--workspace", ws],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = None
    for line in p.stdout:
        if first is None and json.loads(line).get("type") == "assistantDelta":
            first = time.perf_counter() - start
    p.wait()
    return first * 1000

class Acp:
    def __init__(self):
        self.p = subprocess.Popen([bridle, "acp", "--data-dir", data], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.n = 0
    def send(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        return self.n
    def until(self, pred):
        for line in self.p.stdout:
            m = json.loads(line)
            if pred(m):
                return m
    def answer(self, id):
        return self.until(lambda m: m.get("id") == id and "method" not in m)
    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=20)

def chunk(m):
    return m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"

def acp_cold():
    start = time.perf_counter()
    a = Acp()
    a.answer(a.send("initialize", {"protocolVersion": 1}))
    sid = a.answer(a.send("session/new", {"cwd": ws, "mcpServers": []}))["result"]["sessionId"]
    prompt = a.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "say hello"}]})
    a.until(chunk)
    first = (time.perf_counter() - start) * 1000
    a.answer(prompt)
    a.close()
    return first

run = [run_first_delta() for _ in range(10)]
cold = [acp_cold() for _ in range(10)]
a = Acp()
a.answer(a.send("initialize", {"protocolVersion": 1}))
sid = a.answer(a.send("session/new", {"cwd": ws, "mcpServers": []}))["result"]["sessionId"]
warm = []
for _ in range(10):
    t = time.perf_counter()
    prompt = a.send("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "say hello"}]})
    a.until(chunk)
    warm.append((time.perf_counter() - t) * 1000)
    a.answer(prompt)
time.sleep(5)
rss = int([l for l in open(f"/proc/{a.p.pid}/status") if l.startswith("VmRSS")][0].split()[1])
a.close()
print(f"bridle run --json, start to first delta:          median {statistics.median(run):7.1f} ms")
print(f"bridle acp, start to first agent_message_chunk:    median {statistics.median(cold):7.1f} ms")
print(f"bridle acp, session/prompt to first chunk (warm):   median {statistics.median(warm):7.1f} ms")
print(f"bridle acp idle with one session open: RSS {rss / 1024:.1f} MiB")
PY
