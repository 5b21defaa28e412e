#!/usr/bin/env bash
# The GPU check (docs/guide/gpu.md): on one NVIDIA GPU, with no network, in a
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
if ! "$PY" -P -c "import rlvr.data, rlvr.train.loop" >/dev/null 2>&1; then
  # rlvr.data and rlvr.flows live in data/ and flows/ (pyproject's package-dir): a bare PYTHONPATH=. is not enough
  echo "gpu-check: rlvr is not importable by $PY; install this checkout into it first, offline:" >&2
  echo "  $PY -m pip install --no-deps --no-build-isolation .   (torch, transformers, pydantic, duckdb, tomli-w must be there)" >&2
  exit 2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
exec timeout 600 "$PY" bench/gpu_check.py "$@"
