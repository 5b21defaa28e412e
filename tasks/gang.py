"""An update on several machines (update.nnodes = N): N placed tasks that start together, or all again.

Each node is a placed task of the update's pool (rlvr.tasks.placed: same protocol, heartbeat and code
check), named `update.node-{r+1}-of-{N}` (rlvr.schema.node_stage), and runs torchrun with `nproc`
processes in one world of N * nproc ranks (rlvr.stages.training.launch_update).

- **Rendezvous.** The driver gives each attempt an id, the gang, sent with every node's request. Node
  0 picks a free port on its address and publishes both in the Prefect Variable `rlvr-gang-<gang>`;
  the other nodes wait for it and join. torchrun's static rendezvous gives each node its rank (c10d's
  dynamic one orders nodes by address and process id, so which machine held global rank 0, and so
  wrote the checkpoint, would be chance): node 0 holds global rank 0 and commits update(i) through the
  one commit path; the other nodes write nothing.
- **All or none.** The driver watches every node's task run as run_placed watches one. When a node
  fails or its worker stops beating, the driver gives up on the whole attempt: it sets
  `rlvr-gang-<gang>-abort`, which every node polls while torchrun runs (and then stops it), marks the
  nodes' task runs Crashed, and submits a new gang of N. Node failures are never retried alone: a
  node started again on its own could not rejoin its gang's world.
- **Bytes.** Rank r computes the same share of the micro-batches whichever machine holds it, so N nodes
  of nproc processes write the bytes that one machine with N * nproc processes writes, and an attempt
  started again writes the bytes of one never killed (tests/e2e/test_nodes.py).

The node's address is RLVR_NODE_ADDR, else the address this machine reaches the Prefect API from.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from functools import partial
from urllib.parse import urlparse

from prefect.client.orchestration import get_client
from prefect.settings import PREFECT_API_URL
from prefect.states import Crashed
from prefect.variables import Variable
from rlvr.tasks.placed import (
    MAX_LOST,
    PlacedStageError,
    StageRequest,
    _committed_result,
    _give_up_on,
    _submit,
    _unset,
    _watch,
)
from rlvr.tasks.stages import AFTER_COMMIT, call_stage

from rlvr import stages
from rlvr.files import code_fingerprint
from rlvr.schema import UPDATE, node_stage, split_node
from rlvr.store.run import open_run

log = logging.getLogger("rlvr")

NODE_ADDR_ENV = "RLVR_NODE_ADDR"
GANG_WAIT_ENV = "RLVR_GANG_WAIT_SECONDS"  # how long a node waits for node 0's endpoint before giving up
DEFAULT_GANG_WAIT_S = 900.0


def _names(gang: str) -> tuple[str, str]:
    """The gang's Prefect Variables: node 0's endpoint, and the driver's abort."""
    return f"rlvr-gang-{gang}", f"rlvr-gang-{gang}-abort"


def node_address() -> str:
    """The address other nodes reach this one at: RLVR_NODE_ADDR, else the local address of the route
    to the Prefect API (a UDP socket's connect sends nothing)."""
    if addr := os.environ.get(NODE_ADDR_ENV):
        return addr
    host = urlparse(PREFECT_API_URL.value() or "").hostname or "127.0.0.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, 9))
        return s.getsockname()[0]


def _free_port(addr: str) -> int:
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def _aborted(name: str) -> bool:
    try:
        return Variable.get(name, default=None) is not None
    except Exception:  # the API did not answer: keep training; the driver's watch decides
        return False


# the worker's side


def run_node(stage: str, run_dir: str, iteration: int, gang: str) -> dict:
    """Node r of update(i) on several machines (what a worker runs for 'update.node-{r+1}-of-{N}')."""
    base, rank, nodes = split_node(stage)
    if base != UPDATE or rank is None or not gang:
        raise PlacedStageError(f"{stage}: a node of a stage on several machines needs its gang tag: submit it with `rlvr train`")
    endpoint, abort = _names(gang)
    aborted = partial(_aborted, abort)
    if rank == 0:
        addr = node_address()
        port = _free_port(addr)
        Variable.set(endpoint, {"addr": addr, "port": port}, overwrite=True)
        node = stages.Node(0, nodes, addr, port, aborted)
        return call_stage(partial(stages.update, node=node), stage, run_dir, iteration, after_commit=AFTER_COMMIT[UPDATE])
    t0 = time.perf_counter()
    if (at := _wait_endpoint(endpoint, aborted, stage, run_dir, iteration)) is None:
        return {"stage": stage, "iteration": iteration, "skipped": True, "rows": 0, "seconds": 0.0, "created_at": ""}
    node = stages.Node(rank, nodes, at["addr"], int(at["port"]), aborted)
    done = stages.update_node(run_dir, iteration, node)
    seconds = time.perf_counter() - t0
    log.info("%s %d: this node's share of the step is done in %.1fs", stage, iteration, seconds)
    return {"stage": stage, "iteration": iteration, "skipped": done is not None, "rows": 0, "seconds": seconds, "created_at": ""}


def _wait_endpoint(name: str, aborted, stage: str, run_dir: str, iteration: int) -> dict | None:
    """Node 0's endpoint once it is published; None when update(i) is committed meanwhile."""
    limit, t0, checked = float(os.environ.get(GANG_WAIT_ENV, DEFAULT_GANG_WAIT_S)), time.monotonic(), 0.0
    while True:
        try:
            at = Variable.get(name, default=None)
        except Exception:  # the API did not answer: ask again
            at = None
        if at:
            return at
        if aborted():
            raise stages.GangAborted(f"{stage} of {run_dir}: the driver gave up on this gang before node 1 started")
        now = time.monotonic()
        if now - checked > 5.0:
            checked = now
            if _committed_result(run_dir, UPDATE, iteration, skipped=True) is not None:
                return None
        if now - t0 > limit:
            raise PlacedStageError(
                f"{stage} of {run_dir}: node 1 did not publish its endpoint within {limit:.0f}s ({GANG_WAIT_ENV}); "
                "is a worker of the pool free to take it?"
            )
        time.sleep(0.5)


# the driver's side


def run_gang(run_dir: str, stage: str, iteration: int, pool: str, nodes: int) -> dict:
    """update(i) on `nodes` workers of `pool` at once; returns when its commit record is there (run_placed's
    result, plus where each node ran). A failed or lost node starts every node again, up to MAX_LOST times."""
    location = open_run(run_dir).paths.location
    if (done := _committed_result(location, stage, iteration, skipped=True)) is not None:
        log.info("%s %d: committed already, skipped", stage, iteration)
        return done
    failures: list[str] = []
    gangs: list[str] = []
    try:
        while True:
            gangs.append(uuid.uuid4().hex)
            reqs = [
                StageRequest(location, node_stage(stage, r, nodes), iteration, code_fingerprint(), gangs[-1])
                for r in range(nodes)
            ]
            why, where = _attempt(reqs, pool, gangs[-1])
            if (done := _committed_result(location, stage, iteration, skipped=False)) is not None:
                worker = done["worker"] or {}
                log.info(
                    "%s %d: committed by node 1 (%s on %s) of %d", stage, iteration, worker.get("name"), worker.get("host"), nodes
                )
                return done | {"nodes": where}
            if why is None:
                raise PlacedStageError(
                    f"{stage} {iteration} of {location}: every node ended, and no commit matches this driver's inputs: the "
                    "machines' files or rlvr differ; give every machine the same, then `rlvr resume` it"
                )
            failures.append(why)
            if len(failures) >= MAX_LOST:
                raise PlacedStageError(
                    f"{stage} {iteration} of {location} on {nodes} nodes failed {len(failures)} times: " + "; ".join(failures)
                )
            log.warning("%s %d: %s; all %d nodes start again", stage, iteration, why, nodes)
    finally:  # (an aborted gang's variable stays until here: a node that starts late still reads it)
        for gang in gangs:
            for name in _names(gang):
                _unset(name)


def _attempt(reqs: list[StageRequest], pool: str, gang: str) -> tuple[str | None, list[dict]]:
    """One gang: every node submitted, watched until all end. (None, where each node ran) when all
    completed; else (why the first one did not, ...), after stopping the others. (A worker listens for
    runs only while its slot is free, rlvr.tasks.placed.serve_placed: one busy with a node never holds
    another node of its gang, which would wait for it.)"""
    abort = _names(gang)[1]
    ids = [_submit(req, pool) for req in reqs]
    log.info("%s: %d nodes submitted to pool %r (gang %s)", reqs[0].commits(), len(reqs), pool, gang[:8])
    why, where = None, [{} for _ in reqs]
    with ThreadPoolExecutor(max_workers=len(reqs), thread_name_prefix="rlvr-node") as threads:
        # (each thread in a copy of this context: the flow run's, for its logs)
        futures = {threads.submit(contextvars.copy_context().run, _watch, ids[r], reqs[r], pool): r for r in range(len(reqs))}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                r = futures[future]
                state, beat = future.result()
                where[r] = {k: v for k, v in (beat or {}).items() if k in ("host", "name", "pid")}
                if state is not None and state.is_completed():
                    continue
                if state is None:
                    _give_up_on(ids[r], reqs[r], beat)
                if why is None:
                    lost = "lost its worker" if state is None else f"failed: {state.message or state.name}"
                    why = f"{reqs[r].label()} {lost}"
                    _stop_gang(abort, why, [ids[futures[f]] for f in pending])
    return why, where


def _stop_gang(abort: str, why: str, task_runs: list) -> None:
    """Tell the gang's nodes to stop (they poll the abort variable), and end their task runs."""
    Variable.set(abort, {"why": why}, overwrite=True)
    with get_client(sync_client=True) as client:
        for tid in task_runs:
            client.set_task_run_state(tid, Crashed(message=f"its gang stopped: {why}"), force=True)
