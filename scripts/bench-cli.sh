# Sourced by the benchmarks of the `bridle` binary: the repo root as the working folder, the build
# environment, where results go ($OUT, or test-output/bench), and a release build of `bridle` in
# $BRIDLE.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/env.sh
OUT="${OUT:-$ROOT/test-output/bench}"
mkdir -p "$OUT"
cargo build --locked --release -q -p bridle-cli
BRIDLE="$CARGO_TARGET_DIR/release/bridle"
