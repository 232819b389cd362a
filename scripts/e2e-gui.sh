#!/usr/bin/env bash
# GUI end-to-end tests against the real app binary: Xvfb (display chosen by -displayfd), a private
# D-Bus session, WebKitWebDriver on a free loopback port (no tauri-driver), then
# `node tests/e2e/run.mjs`. Every process started here is stopped on exit, also on Ctrl-C.
# Usage: scripts/e2e-gui.sh APP_BINARY OUT_DIR [test-name-filter ...]
# E2E_RUNNER names another node script to run in the same environment (the app benchmarks).
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 APP_BINARY OUT_DIR [test-name-filter ...]" >&2
  exit 2
fi
[ -x "$1" ] || { echo "app binary not found or not executable: $1" >&2; exit 2; }
APP_BINARY="$(realpath "$1")"
OUT_DIR="$(mkdir -p "$2" && realpath "$2")"
shift 2
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
for tool in Xvfb dbus-run-session gnome-keyring-daemon /usr/bin/WebKitWebDriver node curl setsid; do
  command -v "$tool" >/dev/null || { echo "missing $tool (see scripts/setup-system.sh)" >&2; exit 2; }
done

# Runs inside the private D-Bus session: WebKitWebDriver, then the test runner.
read -r -d '' INNER <<'EOF' || true
set -euo pipefail
exec 2>&1 </dev/null
WD_PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
# Without TAURI_WEBVIEW_AUTOMATION the app refuses automation and POST /session hangs.
TAURI_WEBVIEW_AUTOMATION=true /usr/bin/WebKitWebDriver --port="$WD_PORT" --host=127.0.0.1 \
  >"$OUT_DIR/webkitwebdriver.log" 2>&1 &
WD_PID=$!
stop_driver() {
  # Apps that WebKitWebDriver launched and a test left open are its children: end them by pid.
  for child in $(pgrep -P "$WD_PID" 2>/dev/null); do kill "$child" 2>/dev/null || true; done
  kill "$WD_PID" 2>/dev/null || true
  wait "$WD_PID" 2>/dev/null || true
}
trap stop_driver EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$WD_PORT/status" >/dev/null && break
  kill -0 "$WD_PID" 2>/dev/null || { echo "WebKitWebDriver exited; see $OUT_DIR/webkitwebdriver.log"; exit 1; }
  sleep 0.1
done
echo "WebKitWebDriver on 127.0.0.1:$WD_PORT"
cd "$ROOT"
# --foreground: timeout would otherwise move node into a process group of its own, out of
# reach of the cleanup below.
E2E_WEBDRIVER_URL="http://127.0.0.1:$WD_PORT" E2E_APP_BINARY="$APP_BINARY" E2E_OUT_DIR="$OUT_DIR" \
  timeout --foreground 1800 node "${E2E_RUNNER:-tests/e2e/run.mjs}" "$@"
EOF

XVFB_PID=""
GROUP_PID=""
DISPLAY_FILE="$(mktemp)"
cleanup() {
  # The D-Bus session runs in its own process group; end whatever of it is still alive.
  if [ -n "$GROUP_PID" ]; then kill -- -"$GROUP_PID" 2>/dev/null || true; wait "$GROUP_PID" 2>/dev/null || true; fi
  if [ -n "$XVFB_PID" ]; then kill "$XVFB_PID" 2>/dev/null || true; wait "$XVFB_PID" 2>/dev/null || true; fi
  rm -f "$DISPLAY_FILE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Xvfb picks a free display and writes its number to fd 3 once it accepts connections.
Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp 3>"$DISPLAY_FILE" >"$OUT_DIR/xvfb.log" 2>&1 &
XVFB_PID=$!
for _ in $(seq 100); do
  [ -s "$DISPLAY_FILE" ] && break
  kill -0 "$XVFB_PID" 2>/dev/null || { echo "Xvfb exited; see $OUT_DIR/xvfb.log" >&2; exit 1; }
  sleep 0.1
done
[ -s "$DISPLAY_FILE" ] || { echo "Xvfb did not report a display" >&2; exit 1; }
export DISPLAY=":$(head -n1 "$DISPLAY_FILE")"
echo "Xvfb on $DISPLAY"

# A private session bus with an unlocked gnome-keyring (the OS keychain the app stores keys in),
# started after DISPLAY so activated services inherit it; otherwise GLib autolaunches one (plus
# portals) that outlives the test. NO_AT_BRIDGE: no accessibility bus.
# Do NOT set WEBKIT_DISABLE_DMABUF_RENDERER / WEBKIT_DISABLE_COMPOSITING_MODE: WebDriver
# screenshots then hang forever (WebKitGTK 2.50).
export NO_AT_BRIDGE=1 ROOT OUT_DIR APP_BINARY E2E_RUNNER
# setsid: a background job of this non-interactive script is no group leader, so setsid does not
# fork and $! is the new process group's id.
setsid "$ROOT/scripts/with-keyring.sh" bash -c "$INNER" e2e-inner "$@" 2>"$OUT_DIR/dbus-session.log" &
GROUP_PID=$!
status=0
wait "$GROUP_PID" || status=$?
exit "$status"
