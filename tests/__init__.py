"""rlvr's tests: unit/ (no server, no subprocess; `pytest tests/unit` in about a minute), integration/
(a real Prefect server, the S3 test server, vLLM, the sandbox, torchrun, the CLI in a subprocess) and
e2e/ (whole training runs). Shared fixtures: conftest.py; shared helpers: helpers/; data: data/."""
