#!/usr/bin/env bash
# Set up, build and launch the desktop app. Extra arguments go to the app, e.g.
#   npm start -- --workspace ~/src/project
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh

step "setup"
bash scripts/setup.sh
step "build"
npm run build -w ui
cargo build --workspace --locked
step "launch"
exec "$BRIDLE_APP" "$@"
