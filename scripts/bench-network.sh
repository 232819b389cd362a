#!/usr/bin/env bash
# The network proxy against a direct connection, in one run: a 100 MB download from a loopback
# server (time to first byte and throughput, median of 5 curl runs, as a forwarded HTTP request
# and through a CONNECT tunnel) and 200 small requests on fresh connections (a package install's
# pattern), directly on the host and through `bridle tool bash` under bubblewrap and Landlock
# (the same commands; the proxy's host name is pinned to the loopback server). Measured inside
# the command, so the sandbox's start-up is not counted.
. "$(dirname "$0")/bench-cli.sh"
WORK="$(mktemp -d /var/tmp/bridle-bench-net.XXXXXX)"
SERVER=""
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/ws" "$WORK/data" "$WORK/www"
head -c 100000000 /dev/urandom > "$WORK/www/big.bin"
head -c 1000 /dev/urandom > "$WORK/www/small.bin"
python3 - "$WORK/www" > "$WORK/port" <<'EOF' &
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
EOF
SERVER=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT="$(cat "$WORK/port")"

# The measurement, run as one command: "ttfb_ms MB/s" per download (forwarded, then tunnelled),
# then "total_ms" for the 200 small requests.
cat > "$WORK/ws/measure.sh" <<'EOF'
base="$1"
download() {
  for _ in 1 2 3 4 5; do
    curl -s -o /dev/null "$@" -w '%{time_starttransfer} %{speed_download}\n' "$base/big.bin"
  done | sort -n | sed -n 3p | awk '{printf "%.2f %.0f\n", $1 * 1000, $2 / 1e6}'
}
echo "forwarded $(download)"
if [ -n "${HTTP_PROXY:-}" ]; then echo "tunnelled $(download --proxytunnel)"; else echo "tunnelled $(download)"; fi
python3 - "$base/small.bin" <<'PY'
import sys, time, urllib.request
url = sys.argv[1]
start = time.perf_counter()
for _ in range(200):
    with urllib.request.urlopen(url) as r:
        r.read()
print(f"small {(time.perf_counter() - start) * 1000:.1f}")
PY
EOF

direct="$(cd "$WORK/ws" && env -u HTTP_PROXY -u http_proxy bash measure.sh "http://127.0.0.1:$PORT")"
through() {
  printf 'mode = "auto"\n[sandbox]\nbackend = "%s"\n[sandbox.network]\nmode = "allow"\nallow = ["bench.test", "127.0.0.1"]\n' "$1" \
    > "$WORK/data/config.toml"
  BRIDLE_NET_RESOLVE="bench.test=127.0.0.1" "$BRIDLE" --data-dir "$WORK/data" --workspace "$WORK/ws" \
    tool bash --mode auto --approve --args "{\"command\": \"bash measure.sh http://bench.test:$PORT\", \"timeout_secs\": 600}" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["result"]; assert r["data"]["exitCode"] == 0, r["output"]; print(r["output"])'
}
bwrap="$(through bwrap)"
landlock="$(through landlock)"

field() { awk -v k="$1" -v n="$2" '$1 == k { print $n }' <<<"$3"; }
echo
echo "100 MB from a loopback server (median of 5), and 200 small requests on fresh connections:"
printf '| %-22s | %-16s | %-14s | %-17s | %-14s | %-20s |\n' "how" "TTFB, forwarded" "MB/s, forwarded" "TTFB, CONNECT" "MB/s, CONNECT" "200 requests (per one)"
printf '|%s|%s|%s|%s|%s|%s|\n' "------------------------" "------------------" "----------------" "-------------------" "----------------" "----------------------"
for row in "direct:$direct" "proxy, bwrap:$bwrap" "proxy, landlock:$landlock"; do
  name="${row%%:*}"; data="${row#*:}"
  small="$(field small 2 "$data")"
  printf '| %-22s | %13s ms | %14s | %14s ms | %14s | %10s ms (%s ms) |\n' "$name" \
    "$(field forwarded 2 "$data")" "$(field forwarded 3 "$data")" \
    "$(field tunnelled 2 "$data")" "$(field tunnelled 3 "$data")" \
    "$small" "$(awk -v t="$small" 'BEGIN { printf "%.2f", t / 200 }')"
done | tee "$OUT/network.md"
