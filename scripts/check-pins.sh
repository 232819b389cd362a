#!/usr/bin/env bash
# The Tauri crate and the npm @tauri-apps packages must be the same version: the CLI and the
# JS API talk to the runtime of the crate. Fails, naming both, when they drift.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
crate=$(awk '/^name = "tauri"$/{getline; gsub(/[^0-9.]/, ""); print; exit}' "$ROOT/Cargo.lock")
status=0
for pkg in @tauri-apps/api @tauri-apps/cli; do
  npm_version=$(node -p "require('$ROOT/ui/package.json').dependencies?.['$pkg'] ?? require('$ROOT/ui/package.json').devDependencies?.['$pkg']")
  if [ "$npm_version" != "$crate" ]; then
    echo "version drift: tauri crate $crate, npm $pkg $npm_version (pin both to the same version)" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "tauri $crate matches @tauri-apps/api and @tauri-apps/cli"
exit $status
