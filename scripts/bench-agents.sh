#!/usr/bin/env bash
# Subagents (issue 43), through `bridle run` against aimock: the time from a `spawn_agent` call's
# start to its child's first model request (from the parent's audit row and aimock's journal,
# one clock), and the memory of the process with 0, 1 and 4 idle children (its PSS while the
# parent's last call sleeps). Measured, never asserted. BRIDLE: the binary (default: a release
# build); RUNS: how many spawns are timed (default 10).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
if [ -z "${BRIDLE:-}" ]; then
  cargo build --release --locked -q -p bridle-cli
  BRIDLE="$CARGO_TARGET_DIR/release/bridle"
fi
export BRIDLE ROOT
python3 - <<'PY'
import json, os, shutil, socket, statistics, subprocess, tempfile, time, urllib.request

bridle, root = os.environ["BRIDLE"], os.environ["ROOT"]
runs = int(os.environ.get("RUNS", "10"))

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def call(i, name, args):
    return {"id": i, "name": name, "arguments": args}

def fixtures(children):
    tasks = [f"Idle child number {n}" for n in range(children)]
    fx = [
        {"match": {"userMessage": "bench parent", "toolCallId": "z1"}, "response": {"content": "done"}},
        # With every child idle, the parent sleeps: the process is measured meanwhile.
        {"match": {"userMessage": "bench parent", "toolCallId": "w1"},
         "response": {"toolCalls": [call("z1", "bash", {"command": "sleep 3"})]}},
    ]
    if children:
        fx.append({"match": {"userMessage": "bench parent", "toolCallId": f"s{children - 1}"},
                   "response": {"toolCalls": [call("w1", "wait_agent", {"timeout_secs": 60})]}})
        fx.append({"match": {"userMessage": "bench parent", "hasToolResult": False},
                   "response": {"toolCalls": [call(f"s{n}", "spawn_agent", {"task": t}) for n, t in enumerate(tasks)]}})
    else:
        fx.append({"match": {"userMessage": "bench parent", "hasToolResult": False},
                   "response": {"toolCalls": [call("w1", "get_current_time", {})]}})
    fx += [{"match": {"userMessage": t}, "response": {"content": "ready"}} for t in tasks]
    return fx

def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None

def run(children):
    tmp = tempfile.mkdtemp(prefix="bridle-bench-agents-")
    try:
        for d in ("fx", "ws", "data"):
            os.makedirs(os.path.join(tmp, d))
        with open(os.path.join(tmp, "fx", "bench.json"), "w") as f:
            json.dump({"fixtures": fixtures(children)}, f)
        port = free_port()
        mock = subprocess.Popen(
            ["node", os.path.join(root, "node_modules/@copilotkit/aimock/dist/cli.js"), "-p", str(port), "-h", "127.0.0.1",
             "-f", os.path.join(tmp, "fx")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/__aimock/journal", timeout=1)
                    break
                except Exception:
                    time.sleep(0.1)
            proc = subprocess.Popen(
                [bridle, "run", "bench parent", "--json", "--mode", "auto", "--on-ask", "deny", "--provider", "openai",
                 "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m", "--workspace", os.path.join(tmp, "ws"),
                 "--data-dir", os.path.join(tmp, "data")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            peak = None
            for line in proc.stdout:
                event = json.loads(line)
                if event.get("type") == "toolCallBegin" and event["call"]["name"] == "bash":
                    time.sleep(1.5)
                    peak = pss_kib(proc.pid)
            proc.wait()
            journal = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/__aimock/journal"))
        finally:
            mock.kill()
        rows = subprocess.run([bridle, "audit", "--kind", "tool_call", "--tool", "spawn_agent", "--json",
                               "--data-dir", os.path.join(tmp, "data")], capture_output=True, text=True).stdout
        # Each spawn's start: its row is written at its end, with how long it took.
        starts = [row["at"] - (row.get("latencyMs") or 0) for row in map(json.loads, rows.splitlines())]
        firsts = {}
        for entry in journal:
            text = json.dumps(entry["body"].get("messages", []))
            for n in range(children):
                t = f"Idle child number {n}"
                if t in text and "bench parent" not in text:
                    firsts.setdefault(t, entry["timestamp"])
        return peak, starts, firsts
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

delays = []
for _ in range(max(1, runs // 2)):
    _, starts, firsts = run(2)
    start = min(starts) if starts else None
    delays += [t - start for t in firsts.values() if start is not None]
memory = {k: run(k)[0] for k in (0, 1, 4)}
print("| measure | value |")
print("|---|---|")
if delays:
    print(f"| spawn_agent's start to the child's first model request (median of {len(delays)}) | {statistics.median(delays):.0f} ms (min {min(delays)}, max {max(delays)}) |")
for k, kib in memory.items():
    print(f"| PSS of `bridle run` with {k} idle children | {kib / 1024:.1f} MiB |")
if memory.get(0) and memory.get(4):
    print(f"| memory per idle child ((4 - 0) / 4) | {(memory[4] - memory[0]) / 4 / 1024:.2f} MiB |")
PY
