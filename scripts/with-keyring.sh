#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with a real, unlocked gnome-keyring (Secret
# Service), its keyrings in a fresh folder: the OS keychain as a desktop user has it, for tests.
# Inside an existing private session (BRIDLE_KEYRING_READY=1) the command just runs.
# Usage: scripts/with-keyring.sh COMMAND [ARG ...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARG ...]" >&2; exit 2; }
if [ "${BRIDLE_KEYRING_READY:-}" = 1 ]; then exec "$@"; fi
for tool in dbus-run-session gnome-keyring-daemon dbus-send; do
  command -v "$tool" >/dev/null || { echo "missing $tool (see scripts/setup-system.sh)" >&2; exit 2; }
done

read -r -d '' INNER <<'EOF' || true
set -euo pipefail
# The unlock password must not be empty, or the login collection is neither created nor
# unlocked. --foreground keeps the daemon a child we can end (otherwise it outlives the bus).
printf '%s' "bridle-test-keyring" | gnome-keyring-daemon --foreground --unlock --components=secrets \
  >/dev/null 2>&1 &
KEYRING_PID=$!
trap 'kill "$KEYRING_PID" 2>/dev/null || true; wait "$KEYRING_PID" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true" && break
  sleep 0.1
done
BRIDLE_KEYRING_READY=1 "$@"
EOF

KEYRING_HOME="$(mktemp -d "${TMPDIR:-/tmp}/bridle-keyring-XXXXXX")"
trap 'rm -rf "$KEYRING_HOME"' EXIT
status=0
XDG_DATA_HOME="$KEYRING_HOME" dbus-run-session -- bash -c "$INNER" with-keyring "$@" || status=$?
exit "$status"
