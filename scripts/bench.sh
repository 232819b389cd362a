#!/usr/bin/env bash
# Benchmarks, printed as one table. Not part of `npm test`: timings are measured, never asserted.
# Usage: scripts/bench.sh [criterion filter]   (or `scripts/bench.sh app`: the desktop app's only)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="$ROOT/test-output/bench"
mkdir -p "$OUT"

if [ "${1:-}" = "app" ]; then
  step "the desktop app: launch and idle memory against a blank Tauri 2 app, 5,000 messages, a 10,000-line diff, 100,000 audit rows"
  bash scripts/bench-app.sh 2>&1 | tee "$OUT/app.txt"
  exit 0
fi

step "engine and tool-call overhead (criterion; with BEFORE=<rev>, compared to that revision)"
bash scripts/bench-engine.sh "$@" | tee "$OUT/engine.txt"

step "guard decision latency (criterion, then median and p99 over many calls)"
cargo bench --locked -p bridle-core --bench guard -- --noplot "$@" | tee "$OUT/guard.txt"

step "audit log: sanitising and ingest (criterion)"
cargo bench --locked -p bridle-core --bench audit -- --noplot "$@" | tee "$OUT/audit.txt"

step "audit log at 1M rows: filtered queries, verify, export"
cargo run --locked --release -q -p bridle-core --example audit_scale | tee "$OUT/audit-scale.txt"

step "shell sandbox: one bash call in a session under bwrap, Landlock and unsandboxed (criterion)"
cargo bench --locked -p bridle-core --bench sandbox -- --noplot "$@" | tee "$OUT/sandbox.txt"

step "shell sandbox: one bridle tool bash process, the same three ways (hyperfine)"
OUT="$OUT" bash scripts/bench-sandbox.sh 2>&1 | tee "$OUT/sandbox-cli.txt"

step "long sessions: checkpoint per 1 MB edit (with and without), blob store after 1,000 edits, undo of 100 files, compaction at 100k tokens"
cargo bench --locked -p bridle-core --bench changes | tee "$OUT/changes.txt"

step "reviewing a turn hunk by hunk: 200 files / 5,000 hunks listed and shown, one hunk of a 100k-line file rejected"
bash scripts/bench-review.sh | tee "$OUT/review-all.txt"

step "many sessions at one desk: a worktree of 10,000 files against git worktree add, archive and restore of 1,000 changed files, the host with 1/4/8 idle sessions"
bash scripts/bench-desk.sh | tee "$OUT/desk-all.txt"

step "subagents: spawn_agent to the child's first model request, the process with 0/1/4 idle children"
bash scripts/bench-agents.sh | tee "$OUT/agents.txt"

step "a local model: time to first token and tokens/s through bridle run vs llama-server directly, prompt size per wire format"
bash scripts/setup-llama.sh
python3 scripts/bench-llama.py 5 | tee "$OUT/llama.txt"

step "the desktop app: launch and idle memory against a blank Tauri 2 app, 5,000 messages, a 10,000-line diff, 100,000 audit rows"
bash scripts/bench-app.sh 2>&1 | tee "$OUT/app.txt"

step "MCP: four servers started in parallel against one after another, one call MCP echo against a built-in"
cargo run --locked --release -q -p bridle-core --example mcp_overhead -- "$ROOT/node_modules/@modelcontextprotocol/server-everything/dist/index.js" 200 | tee "$OUT/mcp.txt"

step "tools against reference tools"
OUT="$OUT" bash scripts/bench-tools.sh 2>&1 | tee "$OUT/tools.txt"

step "apply_patch on a 100k-line file: unified diff against *** Begin Patch (hyperfine, peak memory)"
OUT="$OUT" bash scripts/bench-patch.sh 2>&1 | tee "$OUT/patch.txt"

step "the network proxy against a direct connection: a 100 MB download, 200 small requests"
OUT="$OUT" bash scripts/bench-network.sh 2>&1 | tee "$OUT/network.txt"

step "background processes: the answer of a background start against a foreground call, Bridle's memory with 8 idle against 8 busy writers over 60 s"
OUT="$OUT" bash scripts/bench-processes.sh 2>&1 | tee "$OUT/processes.txt"

step "ACP: bridle acp against bridle run --json, time to the first answer chunk; an idle bridle acp's memory"
OUT="$OUT" bash scripts/bench-acp.sh 2>&1 | tee "$OUT/acp.txt"

step "results"
# criterion prints "<name>\n    time:   [low mid high]" (or on one line for short names).
awk '
  /time:/ {
    line = $0; sub(/^.*time: *\[/, "", line); sub(/\].*$/, "", line); split(line, t, " ");
    name = ($1 == "time:") ? prev : substr($0, 1, index($0, "time:") - 1);
    gsub(/^ +| +$/, "", name);
    printf "| %-70s | %10s %-3s |\n", name, t[3], t[4];
  }
  { prev = $0 }
' "$OUT/engine.txt" "$OUT/guard.txt" "$OUT/audit.txt" "$OUT/sandbox.txt" | { printf "| %-70s | %14s |\n|%s|%s|\n" "benchmark" "median" "$(printf -- '-%.0s' $(seq 72))" "$(printf -- '-%.0s' $(seq 16))"; cat; }
