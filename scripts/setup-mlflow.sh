#!/usr/bin/env bash
# Build the venv that runs an MLflow tracking *server* (`mlflow server`), and print its interpreter.
# The full mlflow package pins what rlvr's own venv cannot take (pyarrow, among others), so the server
# gets its own venv; rlvr itself only speaks to a server over HTTP with the light client
# (mlflow-skinny, the `mlflow` extra). The tests start `mlflow server --host 127.0.0.1` from this venv
# (tests/integration/test_tracking.py); CI builds it (`make mlflow`, which `make test` depends on).
# Idempotent: a finished venv is reused.
#   bash scripts/setup-mlflow.sh               # default ~/.cache/rlvr/mlflow-venv
#   RLVR_MLFLOW_VENV=/path bash scripts/...    # another location
set -euo pipefail
VENV="${RLVR_MLFLOW_VENV:-$HOME/.cache/rlvr/mlflow-venv}"
PY="${PYTHON:-python3}"
PKG="${RLVR_MLFLOW_PACKAGE:-mlflow==3.17.2}"
STAMP="$VENV/.rlvr-ready-$(echo "$PKG" | tr -c 'a-zA-Z0-9.\n' '_')"
if [ -x "$VENV/bin/mlflow" ] && [ -f "$STAMP" ]; then
  echo "MLflow server venv ready: $VENV ($PKG)" >&2
  echo "$VENV/bin/python"
  exit 0
fi
echo "building the MLflow server venv in $VENV with $PKG (a few minutes)..." >&2
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$PKG"
"$VENV/bin/mlflow" --version >&2
touch "$STAMP"
echo "$VENV/bin/python"
