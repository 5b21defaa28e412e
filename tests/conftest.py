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


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real `prefect server start` on 127.0.0.1 with a PREFECT_HOME of its own, for the "machines" of a
    module (tests.helpers.machines); its API URL."""
    from tests.helpers.machines import free_port, start_prefect_server

    port = free_port()
    proc = start_prefect_server(tmp_path_factory.mktemp("prefect-server"), port)
    yield f"http://127.0.0.1:{port}/api"
    proc.terminate()
    proc.wait(timeout=30)


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real S3 API on 127.0.0.1: moto's standalone server in its own process, spoken to over HTTP by
    the same client code (s3fs, botocore) a user's S3 gets, configured by the standard environment
    (AWS_ENDPOINT_URL, keys, region), which subprocesses inherit. Nothing is patched in-process."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = (tmp_path_factory.mktemp("moto") / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{url}/moto-api/", timeout=2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"moto server did not start on {url}; see {log.name}") from None
            time.sleep(0.2)
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(name, None)
    os.environ.update(
        AWS_ENDPOINT_URL=url, AWS_ACCESS_KEY_ID="rlvr-test-key", AWS_SECRET_ACCESS_KEY=S3_SECRET, AWS_REGION="us-east-1"
    )
    yield url
    proc.terminate()
    proc.wait(timeout=10)


S3_SECRET = "rlvr-test-secret-must-never-be-written-9f3c"  # the tests look for it in every object, record and log


@pytest.fixture()
def s3_uri(s3_endpoint: str) -> str:
    """A fresh bucket on the test server; the run location inside it."""
    import uuid

    import s3fs

    bucket = f"rlvr-{uuid.uuid4().hex[:12]}"
    s3fs.S3FileSystem(skip_instance_cache=True).mkdir(bucket)
    return f"s3://{bucket}/runs/exp1"


class FaultProxy:
    """tests/helpers/faultproxy.py in its own process in front of the S3 test server (conftest.fault_proxy)."""

    def __init__(self, url: str):
        self.url = url

    def set(self, **settings) -> dict:
        """Replace the proxy's faults (tests/helpers/faultproxy.py's settings) and zero its counters."""
        import json
        import urllib.request

        req = urllib.request.Request(f"{self.url}/__faults__", data=json.dumps(settings).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def counts(self) -> dict:
        import json
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/__faults__", timeout=10) as r:
            return json.loads(r.read())


def start_fault_proxy(upstream: str, log_dir: Path, *, tcp: bool = False):
    """tests/helpers/faultproxy.py in its own process in front of `upstream`: (its URL, steering, the process).
    HTTP (S3) by default; tcp=True forwards bytes (the Prefect API, websockets) and is steered on a port
    of its own."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    ports = []
    for _ in range(2):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    port, admin = ports
    cmd = [sys.executable, str(Path(__file__).parent / "helpers" / "faultproxy.py"), "--upstream", upstream, "--port", str(port)]
    log = (log_dir / f"faultproxy-{port}.log").open("w")
    proc = subprocess.Popen(cmd + (["--tcp", str(admin)] if tcp else []), stdout=log, stderr=subprocess.STDOUT)
    steer = FaultProxy(f"http://127.0.0.1:{admin if tcp else port}")
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{steer.url}/__faults__", timeout=2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the fault proxy did not start on port {port}; see {log.name}") from None
            time.sleep(0.1)
    return f"http://127.0.0.1:{port}", steer, proc


@pytest.fixture()
def fault_proxy(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fault-injecting proxy (tests/helpers/faultproxy.py, a real HTTP server in its own process) in front of the
    S3 test server; AWS_ENDPOINT_URL points at it for this test and the subprocesses it starts, so every
    store created from here on goes through it. No faults until the test sets them."""
    url, steer, proc = start_fault_proxy(s3_endpoint, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    yield steer
    proc.terminate()
    proc.wait(timeout=10)
