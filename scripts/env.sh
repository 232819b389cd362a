# Sourced by the scripts: where cargo builds (outside the clone when the cache dir can be made,
# so a fresh clone reuses earlier builds; nothing depends on it being there) and the binaries.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
  if mkdir -p "$HOME/.cache/bridle/target" 2>/dev/null; then
    export CARGO_TARGET_DIR="$HOME/.cache/bridle/target"
  else
    export CARGO_TARGET_DIR="$ROOT/target"
  fi
fi
# The llama.cpp server and model of the local-server tests (scripts/setup-llama.sh), cached
# beside the cargo target.
if [ -z "${BRIDLE_LLAMA_DIR:-}" ]; then
  BRIDLE_LLAMA_DIR="$(dirname "$CARGO_TARGET_DIR")/llama-11434"
fi
export BRIDLE_LLAMA_DIR
# The PyPI MCP servers of the MCP tests (scripts/setup-mcp.sh), in a venv beside it.
if [ -z "${BRIDLE_MCP_VENV:-}" ]; then
  BRIDLE_MCP_VENV="$(dirname "$CARGO_TARGET_DIR")/mcp-venv"
fi
export BRIDLE_MCP_VENV
# The OpenTelemetry protobufs of the telemetry tests' receiver (scripts/setup-otel.sh), beside it.
if [ -z "${BRIDLE_OTEL_VENV:-}" ]; then
  BRIDLE_OTEL_VENV="$(dirname "$CARGO_TARGET_DIR")/otel-venv"
fi
export BRIDLE_OTEL_VENV
BRIDLE_APP="$CARGO_TARGET_DIR/debug/bridle-app"
BRIDLE_CLI="$CARGO_TARGET_DIR/debug/bridle"
export BRIDLE_APP BRIDLE_CLI
step() { printf '\n==== %s (%s)\n' "$1" "$(date +%T)"; }
