"""Stages placed on `rlvr worker` processes ([placement]): both sides of one protocol, on Prefect.

Prefect is the scheduler. Each placed (stage, pool) is a Prefect task that task workers serve
(prefect.task_worker, websocket subscriptions to the API); the driver (`rlvr train`) submits a run of
it and waits for the stage's commit record. Machines share only the Prefect API and the run store.

- **The task key is fixed**: `rlvr.placed.<stage>@<pool>`. Prefect's default key hashes the function's
  code object, file path included, so a driver and a worker installed in different places (or on
  another Python) would never meet; this key depends on the stage and pool only.
- **The request rides in the task run's tags** (`rlvr-run:<location>`, `rlvr-stage:<stage>`,
  `rlvr-iteration:<i>`, `rlvr-code:<the driver's rlvr.files.code_fingerprint>`); the task takes no parameters. Prefect keeps a background task's parameters
  in the submitting machine's local result storage, which a worker on another machine cannot read.
- **The worker refuses a request from other code**: a driver and a worker whose rlvr differs (another
  version, a local edit) could each commit stages that the other would have written differently, and
  the inputs hash does not cover the code. The refusal names both fingerprints; it is not retried.
- **The worker** runs the stage function itself (rlvr.stages: skip when committed, else compute and
  commit), names itself in the record (rlvr.store.commit.made_by: host, worker name, pid), and while
  the stage runs renews a heartbeat: the Prefect Variable `rlvr-beat-<task run id>`, a counter, every
  ttl/6 (`RLVR_HEARTBEAT_SECONDS`, default 30). Transient errors are retried by Prefect on the worker,
  exactly as the driver's own tasks retry them (rlvr.tasks.stages).
- **The driver** skips a stage whose record already matches (no worker needed to resume), submits,
  polls the task run, and reads the record when it completes. A taken task run (Pending or Running)
  whose heartbeat has not changed for ttl seconds, on the driver's own clock (so the machines' clocks
  need not agree), lost its worker: Prefect never gives a SIGKILLed worker's run to another worker,
  so the driver marks it Crashed and submits the stage again, and the next worker that takes it
  restarts the stage from its committed inputs (the dead attempt's leftovers are swept as after any
  kill) and writes the same bytes. A worker listens for runs only while its one slot is free
  (serve_placed), and beats for a run from the moment it receives it: a received run whose beat
  stops is submitted again the same way. A stage that fails is an error, unless another attempt
  committed it.

Tests: tests/e2e/test_workers.py.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

import httpx
from prefect import Task
from prefect.cache_policies import CacheKeyFnPolicy
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.context import TaskRunContext
from prefect.settings import PREFECT_API_URL
from prefect.states import Completed, Crashed
from prefect.variables import Variable
from rlvr.tasks.stages import RETRIES, RETRY_DELAY_S, call_any, retry_transient

from rlvr.errors import RlvrError
from rlvr.files import code_fingerprint
from rlvr.schema import base_stage, part_stage, split_node
from rlvr.stages.lineage import stage_inputs
from rlvr.store.commit import committed, made_by
from rlvr.store.fs import within
from rlvr.store.run import open_run

log = logging.getLogger("rlvr")

HEARTBEAT_ENV = "RLVR_HEARTBEAT_SECONDS"
DEFAULT_HEARTBEAT_S = 30.0
MAX_LOST = 3  # workers a stage may lose (SIGKILL, OOM, a lost machine) before the driver gives up
POLL_S = 0.5
API_OUTAGE_ENV = "RLVR_API_OUTAGE_SECONDS"
DEFAULT_API_OUTAGE_S = 600.0  # a Prefect server restart takes 10-30 s; a longer outage stops the driver, to resume
# One submission at a time from this driver: the parts' threads submit at once, and two task runs inserted
# at the same moment into a Prefect server on SQLite (its default database) make one of them fail with
# "database is locked"; the client tries it again after 2 s, so every part after the first would start 2 s
# late (bench/placed.py). A submission takes under 0.1 s, so queueing them costs little.
_SUBMITTING = threading.Lock()
_TAG = {"run": "rlvr-run:", "stage": "rlvr-stage:", "iteration": "rlvr-iteration:", "code": "rlvr-code:", "gang": "rlvr-gang:"}


class PlacedStageError(RlvrError, RuntimeError):
    """A placed stage failed on its worker, or lost its workers too often; the message says which and why."""


def heartbeat_seconds() -> float:
    return float(os.environ.get(HEARTBEAT_ENV, DEFAULT_HEARTBEAT_S))


def task_key(stage: str, pool: str) -> str:
    return f"rlvr.placed.{stage}@{pool}"


@dataclass(frozen=True)
class StageRequest:
    """What a placed task run asks its worker to do: one stage of one run."""

    run: str  # the run's location: an s3:// URI, or an absolute folder every worker sees at that path
    stage: str
    iteration: int | None
    code: str = ""  # the submitting driver's code_fingerprint(); "" from a driver that sent none
    gang: str = ""  # a node of a stage on several machines (update.nnodes): the attempt its nodes share

    def tags(self) -> list[str]:
        tags = [_TAG["run"] + self.run, _TAG["stage"] + self.stage, _TAG["code"] + self.code]
        tags += [_TAG["gang"] + self.gang] if self.gang else []
        return tags + ([] if self.iteration is None else [_TAG["iteration"] + str(self.iteration)])

    def commits(self) -> str:
        """The stage whose commit record ends this request: a node's stage (node 0 commits it), else its own."""
        return split_node(self.stage)[0]

    @classmethod
    def from_tags(cls, tags: list[str]) -> StageRequest:
        got = {k: t.removeprefix(p) for t in tags for k, p in _TAG.items() if t.startswith(p)}
        if "run" not in got or "stage" not in got:
            raise PlacedStageError(f"a placed task run without its request tags ({sorted(tags)}): submit it with `rlvr train`")
        iteration = int(got["iteration"]) if "iteration" in got else None
        return cls(got["run"], got["stage"], iteration, got.get("code", ""), got.get("gang", ""))

    def check_code(self, worker: dict) -> None:
        """Refuse a request from a driver whose rlvr is not this worker's (see the module docstring)."""
        mine = code_fingerprint()
        if self.code != mine:
            theirs = f"code {self.code}" if self.code else "no code fingerprint (an older rlvr)"
            raise PlacedStageError(
                f"{self.label()} of {self.run}: the driver runs rlvr with {theirs}, this worker "
                f"({worker.get('name', '?')} on {worker.get('host', '?')}) runs code {mine}; install the same rlvr "
                "(`pip install` the same commit) on the driver and every worker, restart the worker, then "
                f"`rlvr resume {self.run}`"
            )

    def check_allowed(self, worker: dict, allow: tuple[str, ...]) -> None:
        """Refuse a run outside the locations this worker serves (`rlvr worker --allow`; none: any): anyone
        who reaches the Prefect API can submit a request, and a stage reads and writes its run's store."""
        if allow and not within(self.run, list(allow)):
            raise PlacedStageError(
                f"{self.label()} of {self.run}: this worker ({worker.get('name', '?')} on {worker.get('host', '?')}) "
                f"serves runs under {', '.join(allow)} only (its --allow); start the run there, or a worker "
                "allowed to serve it"
            )

    def label(self) -> str:
        return self.stage if self.iteration is None else f"{self.stage} {self.iteration}"


def _no_cache_key(context, parameters) -> None:
    return None  # never cached: resume is the stage's own skip (its commit record), not Prefect's cache


class _PlacedStage:
    """The callable of a placed task (see the module docstring): the request is in the task run's tags."""

    stage: str = ""  # the stage its task key names
    worker: dict | None = None  # (host, name, pid) of the `rlvr worker` serving it; None on the driver
    allow: tuple[str, ...] = ()  # the run locations that worker serves (`--allow`); empty: any

    def __call__(self) -> dict:
        run = TaskRunContext.get().task_run
        req = StageRequest.from_tags(list(run.tags))
        if base_stage(req.stage) != self.stage:  # a part or a node of the stage is the stage's task too
            raise PlacedStageError(
                f"task run {run.id} asks the {self.stage} task for stage {req.stage}: submit it with `rlvr train`"
            )
        req.check_code(self.worker or {})
        req.check_allowed(self.worker or {}, self.allow)
        with _beating(str(run.id), self.worker or {}), made_by(self.worker or {}):
            result = call_any(req.stage, req.run, req.iteration, gang=req.gang)
        return {**result, "worker": self.worker}


def _run_name() -> str:
    """A placed task run's name, given by its worker when it starts: 'rollout-3@gpu' (Prefect would number
    the flow run's submissions of the task instead: a resubmitted rollout 1 would show as 'rollout-2')."""
    ctx = TaskRunContext.get()
    if ctx is None:
        return "placed-stage"
    req = StageRequest.from_tags(list(ctx.task_run.tags))
    return f"{req.label().replace(' ', '-')}@{ctx.task.task_key.rsplit('@', 1)[-1]}"


def placed_task(stage: str, pool: str, worker: dict | None = None, allow: tuple[str, ...] = ()) -> Task:
    """The Prefect task of `stage` on `pool`: the driver submits runs of it, a worker (`worker`: its
    identity) serves it. Its key is task_key(stage, pool): a class per (stage, pool), so Prefect names
    the task by the class's qualified name instead of hashing code."""
    name = f"{stage}@{pool}"
    attrs = {"__module__": "rlvr.placed", "__qualname__": name, "stage": stage, "worker": worker, "allow": allow}
    cls = type(name, (_PlacedStage,), attrs)
    task = Task(
        fn=cls(),
        name=stage,
        retries=RETRIES,
        retry_delay_seconds=RETRY_DELAY_S,
        retry_condition_fn=retry_transient,
        cache_policy=CacheKeyFnPolicy(cache_key_fn=_no_cache_key),
        task_run_name=_run_name,
    )
    if task.task_key != task_key(stage, pool):  # how Prefect names a callable object's task changed
        raise RuntimeError(f"placed task {name}: Prefect gave it the key {task.task_key!r}, not {task_key(stage, pool)!r}")
    return task


def worker_identity(name: str | None) -> dict:
    host, pid = socket.gethostname(), os.getpid()
    return {"host": host, "name": name or f"{host}-{pid}", "pid": pid}


def _beat_name(task_run_id: str) -> str:
    return f"rlvr-beat-{task_run_id}"


def _beat(task_run_id: str, payload: dict) -> tuple[threading.Event, threading.Thread]:
    """A thread that renews the task run's heartbeat (`payload` and a counter, in a Prefect Variable)
    every ttl/6 until the event is set, then removes the variable itself."""
    name, stop = _beat_name(task_run_id), threading.Event()

    def beat() -> None:
        n = 0
        while True:
            try:
                Variable.set(name, {**payload, "beat": n}, overwrite=True)
            except Exception as exc:  # the API did not answer: the next beat tries again (the driver waits ttl)
                log.warning("heartbeat of task run %s: %s", task_run_id, exc)
            n += 1
            if stop.wait(heartbeat_seconds() / 6):
                break
        _unset(name)

    thread = threading.Thread(target=beat, name="rlvr-heartbeat", daemon=True)
    thread.start()
    return stop, thread


@contextmanager
def _beating(task_run_id: str, worker: dict) -> Iterator[None]:
    """The task run's heartbeat while the block runs (the stage)."""
    stop, thread = _beat(task_run_id, worker)
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _hold_beat(task_run_id: str, worker: dict) -> threading.Event:
    """Beat for a task run this worker received and has not started (a run acknowledged and then lost with
    its worker would never leave Scheduled). The beat lets the driver see the holder, and see it die.
    Set the returned event to stop; the beat's own thread removes the variable, so the event loop that
    holds the run never waits on the API."""
    return _beat(task_run_id, {**worker, "held": True})[0]


def serve_placed(tasks: list[Task], worker: dict) -> None:
    """Serve placed tasks one at a time (prefect.task_worker.serve with limit 1), listening for runs
    only while the one slot is free.

    Prefect's task worker subscribes once and takes the next run while its slot is busy; its server side
    then sends one more into the socket. Runs held that way wait for a busy worker while another sits
    idle, and a node of an update on several machines (rlvr.tasks.gang) held by the worker that runs
    another node of its gang would wait for it forever. Here a worker opens its subscription when its
    slot is free and closes it once it has a run: closing gives back to the queue whatever the server
    sent past that one. Each run this worker holds still beats from the moment it is received
    (_hold_beat)."""
    import anyio
    import prefect.task_worker as tw
    from prefect.client.schemas.objects import TaskRun
    from prefect.client.subscriptions import Subscription
    from prefect.settings import get_current_settings

    class HoldingTaskWorker(tw.TaskWorker):
        async def _acquire_token(self, task_run_id: UUID) -> bool:
            stop = _hold_beat(str(task_run_id), worker)
            try:
                return await super()._acquire_token(task_run_id)  # waits while the slot is busy
            finally:
                stop.set()

        async def _subscribe_to_task_scheduling(self) -> None:
            base_url = get_current_settings().api.url
            keys = " | ".join(sorted(self.task_keys))
            log.info("listening for runs of %s while this worker is free", keys)
            while True:
                while self._limiter is not None and self._limiter.available_tokens < 1:
                    await anyio.sleep(0.2)
                sub = Subscription(TaskRun, "/task_runs/subscriptions/scheduled", self.task_keys, self.client_id, base_url)
                try:
                    task_run = await sub.__anext__()
                finally:
                    if sub._websocket is not None:  # (a Subscription has no close of its own)
                        await sub._connect.__aexit__(None, None, None)
                if await self._acquire_token(task_run.id):
                    self._runs_task_group.start_soon(self._safe_submit_scheduled_task_run, task_run)

    # serve() builds its worker from the module's TaskWorker: this process serves with the holding one
    tw.TaskWorker = HoldingTaskWorker
    tw.serve(*tasks, limit=1)  # one stage at a time: a stage takes the machine's device and cores


def _unset(name: str) -> None:
    try:
        Variable.unset(name)
    except Exception as exc:  # left behind: a few bytes in the API, read by nobody
        log.warning("could not remove the heartbeat variable %s: %s", name, exc)


def _committed_result(location: str, stage: str, iteration: int | None, *, skipped: bool) -> dict | None:
    """The stage's result from its commit record when it is committed for its current inputs, else None."""
    run = open_run(location)
    rec = committed(run.paths, stage, iteration, stage_inputs(run, stage, iteration))
    if rec is None:
        return None
    fields = {"rows": rec.rows, "seconds": rec.seconds, "created_at": rec.created_at, "worker": rec.worker}
    return {"stage": stage, "iteration": iteration, "skipped": skipped, **fields}


def run_placed(run_dir: str, stage: str, iteration: int | None, pool: str) -> dict:
    """Stage `stage` (iteration) of the run on a worker of `pool`; returns when its commit record is
    there (a StageResult dict, plus the worker that made it). Module docstring: the protocol."""
    location = open_run(run_dir).paths.location  # absolute: a worker has its own working directory
    if (done := _committed_result(location, stage, iteration, skipped=True)) is not None:
        log.info("%s: committed already, skipped", StageRequest(location, stage, iteration).label())
        return done
    req, lost = StageRequest(location, stage, iteration, code_fingerprint()), []
    while True:
        task_run_id = _submit(req, pool)
        log.info("%s: submitted to pool %r (task run %s)", req.label(), pool, task_run_id)
        state, last_beat = _watch(task_run_id, req, pool)
        if state is None:  # its worker is gone
            lost.append(last_beat or {})
            _give_up_on(task_run_id, req, last_beat)
            if len(lost) >= MAX_LOST:
                who = ", ".join(f"{w.get('name', '?')} (pid {w.get('pid', '?')} on {w.get('host', '?')})" for w in lost)
                raise PlacedStageError(f"{req.label()} of {location} lost its worker {len(lost)} times: {who}; see their logs")
            continue
        if (done := _committed_result(location, stage, iteration, skipped=False)) is not None:
            worker = done["worker"] or {}
            log.info("%s: committed by %s on %s in %.2fs", req.label(), worker.get("name"), worker.get("host"), done["seconds"])
            return done
        if state.is_completed():
            raise PlacedStageError(
                f"{req.label()} of {location} was committed by its worker (pool {pool!r}) for other inputs than this "
                "driver computes: the run's files on the two machines differ (a reward plug-in's source, say, or rlvr "
                "itself); give every machine the same files and rlvr version, then `rlvr resume` it"
            )
        raise PlacedStageError(
            f"{req.label()} of {location} failed on its worker (pool {pool!r}, task run {task_run_id}): "
            f"{state.message or state.name}; the worker's log has the traceback. Fix it, then `rlvr resume {location}`"
        )


def run_parts(run_dir: str, stage: str, iteration: int, pool: str | None, parts: int) -> dict:
    """A stage in its `parts` (rollout.shards; rlvr.stages.parts), then its commit from them. On a
    pool, every part is submitted at once and watched by run_placed in a thread of its own, so any
    worker of the pool takes any part and a part whose worker dies is submitted again while the
    others go on; without a pool the parts run here, one after the other."""
    names = [part_stage(stage, p, parts) for p in range(parts)]
    if pool is None:
        done = [call_any(name, run_dir, iteration) for name in names]
    else:
        with ThreadPoolExecutor(max_workers=parts, thread_name_prefix="rlvr-part") as pool_threads:
            # each thread in a copy of this one's context: the flow run's, so its logs reach the API
            futures = [
                pool_threads.submit(contextvars.copy_context().run, run_placed, run_dir, n, iteration, pool) for n in names
            ]
            done = [f.result() for f in futures]
    return call_any(stage, run_dir, iteration) | {"parts": done}


def _submit(req: StageRequest, pool: str) -> UUID:
    """Submit the stage's task run; while the API does not answer, try again, up to api_outage_seconds()."""
    task, down_since = placed_task(base_stage(req.stage), pool).with_options(tags=req.tags()), None
    while True:
        try:
            with _SUBMITTING:
                return task.apply_async().task_run_id
        except Exception as exc:
            if not _api_down(exc):
                raise
            down_since = down_since or time.monotonic()
            if time.monotonic() - down_since > api_outage_seconds():
                raise _outage(req, exc) from exc
            time.sleep(2.0)


def _outage(req: StageRequest, exc: BaseException) -> PlacedStageError:
    return PlacedStageError(
        f"{req.label()} of {req.run}: the Prefect API ({PREFECT_API_URL.value()}) has not answered for "
        f"{api_outage_seconds():.0f}s ({type(exc).__name__}); committed stages are kept: once it is back, "
        f"`rlvr resume {req.run}`"
    )


def api_outage_seconds() -> float:
    return float(os.environ.get(API_OUTAGE_ENV, DEFAULT_API_OUTAGE_S))


def _api_down(exc: BaseException) -> bool:
    """Is this the Prefect API not answering (a restart, a lost network), rather than a refusal?"""
    status = getattr(getattr(exc, "response", None), "status_code", 0)
    return isinstance(exc, httpx.TransportError) or (isinstance(exc, httpx.HTTPStatusError) and status >= 500)


def _poll(client, task_run_id: UUID, name: str):
    """(the task run's state, its heartbeat while it is taken)."""
    state = client.read_task_run(task_run_id).state
    live = state is not None and state.type in (StateType.SCHEDULED, StateType.PENDING, StateType.RUNNING)
    return state, Variable.get(name, default=None) if live else None


def _watch(task_run_id: UUID, req: StageRequest, pool: str):
    """Poll the task run until it ends: (its final state, its worker's last heartbeat, if one was seen), or
    (None, the last heartbeat) when the worker that took it stopped beating for heartbeat_seconds() on this
    machine's clock.

    The heartbeat's age counts only while the API answers: a server restart or a lost network stops the
    worker's beats too, and is not its death. While the API does not answer, the stage's commit record
    (in the store, which the API does not hold) ends the wait; past api_outage_seconds() the driver
    stops with PlacedStageError, and `rlvr resume` goes on from what is committed."""
    name, ttl = _beat_name(str(task_run_id)), heartbeat_seconds()
    seen, since, told, waiting_since, down_since = None, None, None, time.monotonic(), None
    with get_client(sync_client=True) as client:
        while True:
            asked = time.monotonic()
            try:
                state, beat = _poll(client, task_run_id, name)
            except Exception as exc:
                if not _api_down(exc):
                    raise
                down_since = down_since or asked
                if _committed_result(req.run, req.commits(), req.iteration, skipped=False) is not None:
                    return Completed(message="committed while the Prefect API did not answer"), seen
                if time.monotonic() - down_since > api_outage_seconds():
                    raise _outage(req, exc) from exc
                if down_since == asked:
                    log.warning("%s: the Prefect API does not answer (%s); waiting for it", req.label(), type(exc).__name__)
                time.sleep(min(5.0, 4 * POLL_S))
                continue
            now = time.monotonic()
            if down_since is not None or now - asked > ttl / 2:  # the API was away: the heartbeat's age starts anew
                away = now - (down_since or asked)
                log.info("%s: the Prefect API answers again after %.0fs; its heartbeat is read anew", req.label(), away)
                down_since, since = None, None
            if state is not None and state.is_final():
                return state, seen
            # taken, or held by a worker whose one slot is busy (_hold_beat): its heartbeat must go on
            if state is not None and (state.type in (StateType.PENDING, StateType.RUNNING) or beat is not None):
                if since is None or beat != seen:
                    seen, since = beat, now
                if beat and told != (beat.get("pid"), beat.get("held")):
                    told = (beat.get("pid"), beat.get("held"))
                    how = "received" if beat.get("held") else "taken"
                    log.info("%s: %s by worker %s on %s (pid %s)", req.label(), how, beat.get("name"), beat.get("host"), told[0])
                if now - since > ttl:
                    if _committed_result(req.run, req.commits(), req.iteration, skipped=False) is not None:
                        return Completed(message="committed; its worker did not report it"), seen
                    return None, seen
            else:  # scheduled (no worker took it yet), or awaiting a retry on its worker
                since = None
                if waiting_since is not None and now - waiting_since > 10:
                    waiting_since = None
                    log.info(
                        "%s: waiting for a worker of pool %r: start one with `rlvr worker --pool %s --stages %s`",
                        req.label(),
                        pool,
                        pool,
                        base_stage(req.stage),
                    )
            time.sleep(POLL_S)


def _give_up_on(task_run_id: UUID, req: StageRequest, beat: dict | None) -> None:
    """The worker of this task run is gone: record it as Crashed, drop its heartbeat, say so."""
    who = "its worker" if not beat else f"worker {beat.get('name')} (pid {beat.get('pid')} on {beat.get('host')})"
    why = f"{who} stopped its heartbeat for {heartbeat_seconds():.0f}s; the driver submits {req.label()} again"
    log.warning("%s: %s", req.label(), why)
    with get_client(sync_client=True) as client:
        client.set_task_run_state(task_run_id, Crashed(message=why), force=True)
    _unset(_beat_name(str(task_run_id)))
