#!/usr/bin/env bash
# A bash command on an overlay of the workspace against today's bubblewrap, side by side in one
# run (DESIGN §4.3): `true`, `git status` in a 10k-file repository, a command changing 1,000
# small files, and one writing 20,000 files under `node_modules` (new: captured in the layer;
# existing: a scratch folder written through); each case's medians, and the time to read the
# overlay's upper layer back, sort it and land it with checkpoints, as a session does.
# ROUNDS=N (default 15). Built with the bench profile (release without LTO).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
cargo test --profile bench --locked --offline -p bridle-core --lib changes::layer::tests::overlay_figures -- --ignored --nocapture 2>&1 \
    | grep '^|'
