"""The harness's `exec` role and the limits every sandboxed program runs under: rlimits (CPU
seconds, address space, file size, processes, no core files), then, when the sandbox starts as
root, every id dropped to an unprivileged uid. `exec` applies them and execs a plain program
(rlvr.verify.code.launcher.exec_command builds its arguments); the `tests` role applies them to the
solution's process (runner.py). Runs inside the sandbox, standard library only.

Test: tests/integration/test_sandbox.py (limits, uids), tests/integration/test_code_trust.py (/dev/stdout).
"""

import os
import resource


def limit_and_drop(cpu, mem, fsize, nproc, uid):
    """rlimits, then (when started as root inside the sandbox) every id to the unprivileged `uid`."""
    r = resource
    for lim, val in (
        (r.RLIMIT_CPU, (cpu, cpu + 1)),
        (r.RLIMIT_AS, (mem, mem)),
        (r.RLIMIT_FSIZE, (fsize, fsize)),
        (r.RLIMIT_NPROC, (nproc, nproc)),
        (r.RLIMIT_CORE, (0, 0)),
    ):
        r.setrlimit(lim, val)
    if os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


def open_std_pipes():
    """Let the program open its own stdout and stderr again (`open('/dev/stdout', 'w')`, i.e.
    /proc/self/fd/1): the launcher's pipes belong to root with mode 0600, which the uid we drop to
    cannot open. Write-only (0222; the fds already open keep working): reopening for writing only.
    Only pipes change. (Reading one's own stdout back would take nothing from the host anyway.)"""
    import stat

    for fd in (1, 2):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and os.fstat(fd).st_uid == os.geteuid():
                os.fchmod(fd, 0o222)
        except OSError:
            pass  # not ours to change: the program keeps the fd it was given, as before


def run_exec(argv):
    cpu, mem, fsize, nproc, uid = map(int, argv[:5])
    open_std_pipes()
    limit_and_drop(cpu, mem, fsize, nproc, uid)
    os.execv(argv[6], argv[6:])
