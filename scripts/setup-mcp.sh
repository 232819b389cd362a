#!/usr/bin/env bash
# The PyPI MCP servers of the MCP tests (mcp-server-time, mcp-server-git), pinned, in a venv
# cached outside the clone ($BRIDLE_MCP_VENV, set by scripts/env.sh). The npm ones come with
# `npm install` (root devDependencies). Idempotent: a venv with both servers is left alone.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/scripts/env.sh"

VENV="$BRIDLE_MCP_VENV"
if [ -x "$VENV/bin/mcp-server-time" ] && [ -x "$VENV/bin/mcp-server-git" ]; then
  echo "setup-mcp: the MCP servers are in $VENV"
  exit 0
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check mcp-server-time==2026.10.19 mcp-server-git==2026.10.19
echo "setup-mcp: ready in $VENV"
