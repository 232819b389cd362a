#!/usr/bin/env bash
# Everything Bridle needs, on a fresh Debian/Ubuntu machine with Node.js >= 20 and npm:
# system packages, a Rust toolchain (rustup, if cargo is missing) and the npm packages from
# package-lock.json. Idempotent: each step checks before it installs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

bash scripts/setup-system.sh

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: installing the Rust toolchain with rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component clippy,rustfmt
  export PATH="$HOME/.cargo/bin:$PATH"
fi
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js >= 20 is required (found $(node --version))" >&2
  exit 1
fi
# npm ci only when the installed tree does not match the lockfile.
if ! cmp -s package-lock.json node_modules/.package-lock.json.bridle 2>/dev/null; then
  npm ci --no-audit --no-fund
  cp package-lock.json node_modules/.package-lock.json.bridle
else
  echo "setup: npm packages match package-lock.json"
fi
# The ACP clients the tests drive `bridle acp` with (tests/acp): acpx pulls platform packages some
# registries do not serve, which `npm ci` refuses, so they are installed apart, with `npm install`.
if ! cmp -s tests/acp/package-lock.json tests/acp/node_modules/.package-lock.json.bridle 2>/dev/null; then
  npm install --prefix tests/acp --no-audit --no-fund
  cp tests/acp/package-lock.json tests/acp/node_modules/.package-lock.json.bridle
else
  echo "setup: the ACP test clients match tests/acp/package-lock.json"
fi
