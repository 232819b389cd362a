#!/usr/bin/env bash
# The reference for the app benchmarks: a blank Tauri 2 app (the recipe's scaffold: React page,
# one command), built in release mode like Bridle's, cached outside the clone.
# Usage: scripts/bench-app/build-blank.sh  -> prints the binary's path on its last line
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RECIPE="$ROOT/../shared/recipes/tauri-linux"
CACHE="${BRIDLE_CACHE_DIR:-$HOME/.cache/bridle}/blank-tauri"
APP_DIR="$CACHE/app"
BIN="$CACHE/target/release/lab-tauri-app"
if [ ! -x "$BIN" ]; then
  [ -f "$RECIPE/10-scaffold-app.sh" ] || { echo "the recipe's scaffold is missing: $RECIPE" >&2; exit 2; }
  if [ ! -f "$APP_DIR/src-tauri/Cargo.toml" ]; then
    # The scaffold's last step draws a letter on the icon, which needs a font ImageMagick may
    # not find; the icon is made again below without it.
    APP_DIR="$APP_DIR" bash "$RECIPE/10-scaffold-app.sh" >&2 || true
  fi
  [ -f "$APP_DIR/src-tauri/Cargo.toml" ] || { echo "the blank app was not scaffolded" >&2; exit 1; }
  if [ ! -f "$APP_DIR/src-tauri/icons/icon.png" ]; then
    (cd "$APP_DIR" && convert -size 1024x1024 xc:none -fill '#2f6fdf' -draw 'roundrectangle 64,64 960,960 160,160' \
      PNG32:app-icon.png && npx tauri icon app-icon.png >/dev/null)
  fi
  (cd "$APP_DIR" && npm run build >&2)
  (cd "$APP_DIR/src-tauri" && CARGO_TARGET_DIR="$CACHE/target" cargo build --release --features tauri/custom-protocol >&2)
fi
echo "$BIN"
