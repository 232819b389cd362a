#!/usr/bin/env bash
# System packages Bridle needs on Debian/Ubuntu: the Tauri v2 build deps (WebKitGTK 4.1), the
# GUI test stack (Xvfb, WebKitWebDriver, ImageMagick, a private D-Bus with gnome-keyring) and
# ripgrep for the search benchmark, bubblewrap, the shell sandbox, and cmake + python3 to build the
# llama.cpp server of the local-server tests, python3-venv for the PyPI MCP servers of the MCP
# tests, pytest and Go for the tests that builds still work with home hidden from commands, and
# openssl (the command) for the HTTPS provider test's certificates and server.
# Idempotent: installs only what is missing.
set -euo pipefail

PACKAGES=(
  build-essential curl file pkg-config openssl
  libwebkit2gtk-4.1-dev libxdo-dev libayatana-appindicator3-dev librsvg2-dev
  webkit2gtk-driver xvfb xauth x11-utils imagemagick
  dbus gnome-keyring libsecret-tools libdbus-1-dev
  fonts-dejavu-core ripgrep hyperfine sqlite3 bubblewrap
  cmake python3 python3-venv
  python3-pytest golang-go
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup-system: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
