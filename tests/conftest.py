"""Shared fixtures: a private model cache, the embedded tiny model, a Prefect test server.

Everything is real and small: the tiny Llama is built (and warmed up) once per session in a
temporary RLVR_CACHE; Prefect runs a real temporary API server once per session.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlvr.config import Config


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("rlvr-cache")
    os.environ["RLVR_CACHE"] = str(cache)  # subprocesses inherit it
    return cache


@pytest.fixture(scope="session")
def small_config() -> Config:
    """The default recipe, shrunk: 16 prompts x G=4 per iteration."""
    return Config.model_validate(
        {
            "run": {"iterations": 2},
            "update": {"minibatches": 1},
            "rollout": {"prompts_per_iteration": 16, "group_size": 4, "engine": "transformers"},
        }
    )


@pytest.fixture(scope="session")
def tiny_model(small_config: Config) -> Path:
    from rlvr.models.tiny import ensure_tiny_model

    return ensure_tiny_model(small_config)


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real temporary Prefect API server for the whole session; returns its URL so that
    CLI subprocesses can use it too instead of starting their own."""
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield PREFECT_API_URL.value()
