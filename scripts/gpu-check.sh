#!/usr/bin/env bash
# The GPU checks (docs/guide/gpu.md), on one NVIDIA GPU with no network:
#   bash scripts/gpu-check.sh            # bench/gpu.py: the update's tokens/s and MFU against TRL's on this
#                                        # card, SmolLM2's and Qwen2.5-1.5B's shapes (< 8 min),
#                                        # bench/results/gpu-<card>.json
#   bash scripts/gpu-check.sh bf16       # bench/gpu_check.py: the bf16 step on CUDA against fp32 on the CPU,
#                                        # same rows (exit 0: within tolerance), bench/results/gpu-check.json
#   bash scripts/gpu-check.sh speed --shapes smollm2-135m   # further arguments go to the script
#   PYTHON=/path/python bash scripts/... # another interpreter (default: .venv/bin/python, else python3)
# Wheels in .gpu-wheels/ (e.g. trl, which is pure Python) are installed offline into .gpu-site/ first.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi -L fails); run it on a GPU machine" >&2
  exit 2
fi
what="speed"
if [ $# -gt 0 ] && { [ "$1" = "speed" ] || [ "$1" = "bf16" ]; }; then what="$1"; shift; fi
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
nvidia-smi -L
if compgen -G ".gpu-wheels/*.whl" >/dev/null; then
  "$PY" -m pip install --quiet --no-index --no-deps --target .gpu-site .gpu-wheels/*.whl
  export PYTHONPATH="$PWD/.gpu-site${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! "$PY" -P -c "import rlvr.data, rlvr.train.loop" >/dev/null 2>&1; then
  # rlvr.data and rlvr.flows live in data/ and flows/ (pyproject's package-dir): a bare PYTHONPATH=. is not enough
  echo "gpu-check: rlvr is not importable by $PY; install this checkout into it first, offline:" >&2
  echo "  $PY -m pip install --no-deps --no-build-isolation .   (torch, transformers, pydantic, duckdb, tomli-w must be there)" >&2
  exit 2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
if [ "$what" = "bf16" ]; then exec timeout 600 "$PY" bench/gpu_check.py "$@"; fi
exec timeout 540 "$PY" bench/gpu.py "$@"
