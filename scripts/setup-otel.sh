#!/usr/bin/env bash
# The OpenTelemetry protobuf definitions the telemetry tests decode what Bridle exports with
# (opentelemetry-proto from PyPI, pinned), in a venv cached outside the clone ($BRIDLE_OTEL_VENV,
# set by scripts/env.sh). Idempotent: a venv that imports them is left alone.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/scripts/env.sh"

VENV="$BRIDLE_OTEL_VENV"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import opentelemetry.proto.collector.logs.v1.logs_service_pb2' 2>/dev/null; then
  echo "setup-otel: opentelemetry-proto is in $VENV"
  exit 0
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check opentelemetry-proto==1.45.2
echo "setup-otel: ready in $VENV"
