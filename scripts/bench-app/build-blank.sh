#!/usr/bin/env bash
# The reference for the app benchmarks: a blank Tauri 2 app (the recipe's scaffold: React page,
# one command), built in release mode like Bridle's, cached outside the clone. Its window is
# Bridle's size (1200x800, src-tauri/src/lib.rs): under Xvfb every frame is drawn in software, so
# a window half as large would start faster and hold less than the same app at Bridle's size.
# Usage: scripts/bench-app/build-blank.sh  -> prints the binary's path on its last line
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RECIPE="$ROOT/../shared/recipes/tauri-linux"
CACHE="${BRIDLE_CACHE_DIR:-$HOME/.cache/bridle}/blank-tauri"
APP_DIR="$CACHE/app"
BIN="$CACHE/target/release/lab-tauri-app"
SIZED="$CACHE/window-1200x800"
if [ ! -x "$BIN" ] || [ ! -f "$SIZED" ]; then
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
  node -e '
    const fs = require("fs"), file = process.argv[1], conf = JSON.parse(fs.readFileSync(file, "utf8"));
    Object.assign(conf.app.windows[0], { width: 1200, height: 800 });
    fs.writeFileSync(file, JSON.stringify(conf, null, 2) + "\n");' "$APP_DIR/src-tauri/tauri.conf.json"
  (cd "$APP_DIR" && npm run build >&2)
  (cd "$APP_DIR/src-tauri" && CARGO_TARGET_DIR="$CACHE/target" cargo build --release --features tauri/custom-protocol >&2)
  touch "$SIZED"
fi
echo "$BIN"
