#!/usr/bin/env bash
# The GPU check (README: "Installing on a GPU machine"): on one NVIDIA GPU, with no network, in a
# few minutes, the update in bf16 on CUDA for the tiny model and SmolLM2 against CPU fp32 on the same
# rows (loss within bench/gpu_check.py's TOLERANCE), its tokens/s and peak memory, written to
# bench/results/gpu-check.json. SmolLM2 is the prepared folder when `rlvr models prepare
# smollm2-135m-instruct` has run on this machine, else a random Llama of its shape.
#   bash scripts/gpu-check.sh              # exit 0: every loss within tolerance
#   PYTHON=/path/python bash scripts/...   # another interpreter (default: .venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi -L fails); run it on a GPU machine" >&2
  exit 2
fi
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
nvidia-smi -L
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec timeout 600 "$PY" bench/gpu_check.py "$@"
