"""The harness's `tests` role, the trusted side: it forks the solution's process (serve.py) before
it reads anything secret, drops to its own uid, stays non-dumpable, then runs the instrumented test
program (rlvr.verify.code.asserts) on proxies of the solution's names (proxy.py) and writes a record
on the report pipe for each assert site entered, passed or failed (`_recorder`). Runs inside the
sandbox, standard library only.

Test: tests/integration/test_sandbox.py (the fork's memory and fds, patching the harness, tracing
it), tests/integration/test_redteam.py, tests/integration/test_humaneval.py.
"""

import builtins
import marshal
import os
import resource
import sys

from .limits import limit_and_drop
from .proxy import Channel, Remote
from .serve import describe, run_serve
from .wire import NotPlainData, decode, loads


def _recorder(key, fd, write, budget):
    """The hook the instrumented asserts call (see rlvr.verify.code.asserts for the records).

    `active` holds the sites whose condition is being evaluated: a site that fails inside another's
    (a test's helper that asserts, called in an assert: `assert is_sorted_of(candidate(x), x)`)
    raises its error on, so that the outer assert fails as in one process; only an outermost
    site's failure is recorded and passed over (the tests go on)."""
    seen, late = set(), set()
    current = None
    active = []

    def record(site, outcome=None):
        nonlocal current, budget
        if site < 0:
            write(fd, key + b" END\n")
            return
        if outcome is None:
            active.append(site)
            if site == current:
                return
            current = site
            if budget > 0:
                budget -= 1
                write(fd, b"%s B %d\n" % (key, site))
            elif site not in late:
                late.add(site)
                write(fd, b"%s L %d\n" % (key, site))
            return
        if active and active[-1] == site:
            active.pop()
        _write_outcome(site, outcome)
        if outcome is not True and active:
            raise outcome  # inside another site's condition: that assert fails too

    def _write_outcome(site, outcome):
        tag = (site, outcome is True)
        if tag in seen:
            return
        if outcome is True:
            seen.add(tag)
            write(fd, b"%s P %d\n" % (key, site))
            return
        first = not any(not ok for _, ok in seen)
        seen.add(tag)
        text = getattr(outcome, "rlvr_text", None) or describe(outcome)
        line = getattr(outcome, "rlvr_line", 0)
        text = text.encode("utf-8", "backslashreplace") if first else b""
        write(fd, b"%s F %d %d %s\n" % (key, site, line, text))

    return record


def _swap(code, placeholder, hook):
    consts = tuple(
        hook if type(c) is str and c == placeholder else _swap(c, placeholder, hook) if type(c) is type(code) else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


class _Child:
    """The solution's process as Channel sees it: wait() -> exit code, -N for signal N (as Popen)."""

    def __init__(self, pid):
        self.pid = pid

    def wait(self):
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _fork_solution(cpu, mem, fsize, nproc, uid):
    """The solution's process: a fork of this one, made before the secret is read (its memory holds
    nothing the solution may not see: the harness's modules, the standard library, the limits), with every fd
    but its two pipes closed (the secret memfd and the report pipe among them), stdin /dev/null, its
    own rlimits and uid; then the harness's `serve` role, as if started as its own process (no second
    interpreter to start: half of a check's start-up). It never returns here: it exits from `serve`."""
    to_sol_r, to_sol_w = os.pipe()
    from_sol_r, from_sol_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 70
        try:
            low, high = sorted((to_sol_r, from_sol_w))
            os.closerange(3, low)
            os.closerange(low + 1, high)
            os.closerange(high + 1, max(high + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0]))
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            limit_and_drop(cpu, mem, fsize, nproc, uid)
            sys.argv[:] = [sys.argv[0], "serve", str(to_sol_r), str(from_sol_w)]
            run_serve(to_sol_r, from_sol_w)
            code = 0
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(to_sol_r)
    os.close(from_sol_w)
    return Channel(_Child(pid), os.fdopen(to_sol_w, "wb"), os.fdopen(from_sol_r, "rb"))


def _non_dumpable():
    """No ptrace, no /proc/<pid>/mem or fd of this process for anyone without CAP_SYS_PTRACE.

    prctl(PR_SET_DUMPABLE, 0) through _ctypes itself: the ctypes package costs 6 ms a start. A
    failure stops the harness (no records: the solution earns 0), never a dumpable harness."""
    import _ctypes

    class Int(_ctypes._SimpleCData):
        _type_ = "i"

    class Function(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL
        _restype_ = Int

    prctl = Function(_ctypes.dlsym(_ctypes.dlopen(None, 0), "prctl"))
    if prctl(4, 0, 0, 0, 0) != 0 or prctl(3, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE = 4, PR_GET_DUMPABLE = 3
        raise SystemExit("harness: prctl(PR_SET_DUMPABLE, 0) failed")


def _drop_self(uid):
    """Our own uid (another than the solution's), and non-dumpable again (a change of uid resets it)."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    _non_dumpable()


def run_tests(argv):
    """argv: CPU MEM FSIZE NPROC (the solution's rlimits) UID_SOLUTION SECRET_FD."""
    cpu, mem, fsize, nproc, uid_solution, secret_fd = map(int, argv[:6])
    _non_dumpable()  # before the fork: the solution's process never sees this one dumpable
    channel = _fork_solution(cpu, mem, fsize, nproc, uid_solution)
    with os.fdopen(secret_fd, "rb") as f:
        header, code = f.read().split(b"\n", 1)
    head = loads(header)
    report = head["report_fd"]
    _drop_self(head["uid_harness"])
    hook = _recorder(head["key"].encode(), report, os.write, head["budget"])
    channel.on_death = lambda status: os.write(report, b"%s D %s\n" % (head["key"].encode(), status.encode()))
    tests = _swap(marshal.loads(code), head["hook"], hook)
    import types

    main = types.ModuleType("__main__")  # the tests' module, as a script's: unittest.main() finds its TestCases here
    sys.modules["__main__"] = main
    ns = main.__dict__
    ns["__builtins__"] = builtins
    channel.tests = ns
    try:
        known = channel.ask(["names", head["names"]])
    except (Exception, NotPlainData) as err:
        known = {n: ["function"] for n in head["names"]}
        status = getattr(err, "rlvr_status", None) or getattr(err, "rlvr_text", None) or describe(err)
        line = getattr(err, "rlvr_line", 0)
        os.write(report, b"%s S %d %s\n" % (head["key"].encode(), line, status.encode("utf-8", "backslashreplace")))
    for name, kind in known.items() if type(known) is dict else ():
        if name not in head["names"] or type(kind) is not list or not kind:
            continue
        if kind[0] == "function":
            ns[name] = Remote(name, channel)
        elif kind[0] == "value" and len(kind) == 2:
            try:
                ns[name] = decode(kind[1])
            except (NotPlainData, TypeError, RecursionError):
                pass
        elif kind[0] == "module" and len(kind) == 2 and kind[1] in sys.stdlib_module_names:
            try:
                ns[name] = __import__(kind[1])
            except ImportError:
                pass
    if head.get("helpers"):  # the prompt's own definitions: the tests call these, never the solution's
        exec(compile(head["helpers"], "prompt.py", "exec"), ns)
    sys.argv[:] = ["tests.py"]  # a test's unittest.main() parses sys.argv: not the harness's own
    try:
        exec(tests, ns)
    except SystemExit as stop:  # the tests' own (unittest.main(), sys.exit): a solution's arrives as SolutionError
        if stop.code not in (None, 0):
            raise
    hook(-1)
    # the records are written (os.write: unbuffered): no interpreter teardown to wait for (6 ms of a
    # check); the solution's process dies with the sandbox's pid namespace
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
