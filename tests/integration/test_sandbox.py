"""The code sandbox against real bwrap: an adversarial corpus, then the ordinary checks.

Every hostile program exits 0 (and so would pass) only if its attack worked; the corpus test
asserts that each one scores 0 with the expected reason, that a temporary "run store" is
byte-for-byte unchanged, that nothing listened to on 127.0.0.1 was reached, that no process of
the corpus outlives it, and that the sandbox still runs a correct program afterwards.
Run: .venv/bin/python -m pytest -q tests/integration/test_sandbox.py   (root, or an ordinary user with user namespaces:
bash scripts/test-as-user.sh; ~30 s on 2 cores)
"""

from __future__ import annotations

import ast
import hashlib
import shutil
import socket
import sys
import tempfile
import time
import warnings
from pathlib import Path

import psutil
import pytest

from rlvr.verify.code import (
    UID_BASE,
    UID_SPAN,
    AssertSite,
    AssertTests,
    IOTests,
    Limits,
    check_assert_tests,
    check_io_tests,
    check_many,
    extract_code,
    instrument_asserts,
    run_program,
    sandbox_problem,
)

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no code sandbox here: {sandbox_problem()}")

LIMITS = Limits(
    wall_seconds=3.0,
    cpu_seconds=2,
    memory_mb=512,
    file_mb=8,
    tmp_mb=16,
    processes=32,
    output_bytes=64 << 10,
)


@pytest.fixture()
def run_store():
    """A fake run folder outside /tmp (the sandbox's /tmp is its own), writable by anyone on the host."""
    root = Path(tempfile.mkdtemp(prefix="rlvr-sandbox-store-", dir="/var/tmp"))
    (root / "problems").mkdir()
    (root / "problems" / "part-000000.parquet").write_bytes(b"PAR1 ground truth: the answer is 42")
    (root / "run.toml").write_text("seed = 0\n")
    for path in (root, *root.rglob("*")):
        # only the read-only mount stops writes
        path.chmod(0o777 if path.is_dir() else 0o666)
    yield root
    shutil.rmtree(root)


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        h.update(f"{path.relative_to(root)}:{path.stat().st_mode:o}\n".encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def corpus(store: Path, port: int) -> list[tuple]:
    """(name, program, accepted reason prefixes[, tests]). Each program exits 0 only if its attack worked."""
    data = store / "problems" / "part-000000.parquet"
    return [
        # mapped, never touched: hits RLIMIT_AS without needing CPU time (this machine may be loaded)
        (
            "memory bomb",
            "import mmap\nx = []\nwhile True:\n    x.append(mmap.mmap(-1, 10**7))",
            ("memory: exceeded 512 MiB",),
        ),
        (
            "one huge allocation",
            "x = bytearray(8 * 1024**3)",
            ("memory: exceeded 512 MiB",),
        ),
        (
            "fork bomb",
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
            ("timeout",),
        ),
        (
            "process limit",
            (
                "import os, time\nn = 0\nfor _ in range(500):\n    if os.fork() == 0:\n        time.sleep(30)\n"
                "        os._exit(0)\n    n += 1\nprint(n)"
            ),
            ("failed: BlockingIOError",),
        ),
        (
            "infinite loop",
            "while True:\n    pass",
            ("timeout: exceeded 2 CPU seconds", "timeout: killed after"),
        ),
        (
            "sleep forever",
            "import time\ntime.sleep(10**6)",
            ("timeout: killed after 3.0s wall clock",),
        ),
        (
            "ignore SIGTERM/SIGINT",
            (
                "import signal, time\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, "
                "signal.SIGXCPU):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass"
            ),
            ("timeout",),
        ),
        (
            "connect to 127.0.0.1",
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)",
            ("failed: OSError", "failed: ConnectionRefusedError"),
        ),
        (
            "connect outside",
            "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=2)",
            ("failed: OSError",),
        ),
        (
            "resolve a name",
            "import socket\nsocket.getaddrinfo('pypi.org', 443)",
            ("failed: socket.gaierror", "failed: gaierror"),
        ),
        (
            "write into the run store",
            f"open({str(store / 'evil.txt')!r}, 'w').write('x')",
            ("failed: FileNotFoundError",),  # the run store is not in the sandbox at all
        ),
        (
            "overwrite a run-store file",
            f"open({str(data)!r}, 'w').write('tampered')",
            ("failed: FileNotFoundError",),
        ),
        (
            "delete a run-store file",
            f"import os\nos.remove({str(data)!r})",
            ("failed: FileNotFoundError",),
        ),
        (
            "rename the run store",
            f"import os\nos.rename({str(store)!r}, {str(store) + '-moved'!r})",
            ("failed: FileNotFoundError",),
        ),
        (
            "write into /root",
            "open('/root/evil', 'w').write('x')",
            ("failed: PermissionError", "failed: OSError", "failed: FileNotFoundError"),
        ),
        (
            "write into /etc",
            "open('/etc/evil', 'w').write('x')",
            ("failed: PermissionError", "failed: OSError"),
        ),
        (
            "poison the venv",
            f"open({sys.prefix + '/evil.pth'!r}, 'w').write('import os')",
            ("failed: FileNotFoundError",),  # the venv is not in the sandbox
        ),
        (
            "read /etc/shadow",
            "print(open('/etc/shadow').read())",
            ("failed: PermissionError", "failed: FileNotFoundError"),  # not in the sandbox's /etc
        ),
        (
            "read secrets in /root",
            "import os\nprint(os.listdir('/root/.pyenv/..'))\nassert len(os.listdir('/root')) > 1",
            ("failed: AssertionError", "failed: FileNotFoundError"),
        ),
        (
            "write /dev/shm",
            "open('/dev/shm/x', 'w').write('x')",
            ("failed: PermissionError", "failed: OSError: [Errno 30] Read-only file system"),
        ),
        ("huge stdout", "while True:\n    print('x' * 10000)", ("output_limit",)),
        (
            "huge stderr",
            "import sys\nwhile True:\n    sys.stderr.write('y' * 10000)",
            ("output_limit",),
        ),
        (
            "kill the parent",
            "import os\nos.kill(os.getppid(), 9)",
            # as root the harness has another uid; in a user namespace (one uid) killing it only ends this run
            ("failed: PermissionError", "timeout: exceeded 2 CPU seconds (SIGKILL)"),
        ),
        (
            "kill everything",
            # kills what the solution's uid may signal (not the harness); then the tests run as ever
            "import os\nos.kill(-1, 9)\nimport time\ntime.sleep(1)\ndef add(a, b):\n    return a - b",
            ("failed: AssertionError", "timeout: exceeded 2 CPU seconds (SIGKILL)"),
            "assert add(1, 1) == 2",
        ),
        ("become root", "import os\nos.setuid(0)", ("failed: PermissionError", "failed: OSError: [Errno 22]")),
        (
            "raise the CPU limit",
            "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (-1, -1))",
            ("failed: ValueError",),
        ),
        (
            "see host processes",
            (
                "import os\ncmds = [open(f'/proc/{p}/cmdline', 'rb').read() for p in os.listdir('/proc') "
                "if p.isdigit()]\nassert any(b'pytest' in c for c in cmds), f'{len(cmds)} processes visible'"
            ),
            ("failed: AssertionError",),
        ),
        (
            "read pid 1 of the host",
            # pid 1 is bwrap (root mode: not ours to read; user namespace: ours, but started with a clean environment)
            "assert 'RLVR_CANARY' in open('/proc/1/environ').read()",
            ("failed: PermissionError", "failed: AssertionError"),
        ),
        (
            "fill /tmp",
            "i = 0\nwhile True:\n    open(f'/tmp/f{i}', 'wb').write(b'0' * 2**20)\n    i += 1",
            ("failed: OSError: [Errno 28] No space left",),
        ),
        (
            "one file too big",
            "open('/tmp/big', 'wb').write(b'0' * 64 * 2**20)",
            ("failed: OSError: [Errno 27] File too large",),
        ),  # Python ignores SIGXFSZ
        (
            "daemon (double fork)",
            (
                "import os, time, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                "        time.sleep(60)\n    os._exit(0)\ntime.sleep(0.2)\nsys.exit(3)"
            ),
            ("error: exit 3", "failed"),
        ),
        (
            "background shell job",
            "import subprocess, sys\nsubprocess.Popen(['sh', '-c', 'sleep 60 &'])\nsys.exit(4)",
            ("failed",),
        ),
        (
            "exit 0 before the tests",
            "import sys\nsys.exit(0)",
            ("failed: the solution ended",),
        ),
        (
            "os._exit(0) before the tests",
            "import os\nos._exit(0)",
            ("failed: the solution ended",),
        ),
    ]


def sandbox_processes() -> list[psutil.Process]:
    """Sandbox processes alive now, leaving out those under another checkout's bwrap (the machine
    may be shared with other test runs; a survivor of ours is orphaned, so it has no such parent)."""
    from rlvr.verify.code.bwrap import HARNESS, bwrap_binary

    ours = bwrap_binary()
    found = []
    for proc in psutil.process_iter(["uids", "cmdline"]):
        uid = proc.info["uids"].real if proc.info["uids"] else -1
        cmd = " ".join(proc.info["cmdline"] or [])
        if UID_BASE <= uid < UID_BASE + UID_SPAN or "bwrap" in cmd or HARNESS in cmd:
            try:
                chain = [" ".join(p.cmdline()) for p in (proc, *proc.parents())]
            except psutil.Error:
                continue  # gone meanwhile
            if any("bwrap" in c and not c.startswith(ours) for c in chain):
                continue  # another checkout's sandbox, alive under its own bwrap
            found.append(proc)
    return found


def test_adversarial_corpus_is_contained(run_store, monkeypatch):
    monkeypatch.setenv("RLVR_CANARY", "a secret of the verifier's environment")
    before = tree_digest(run_store)
    # other fixtures of the session (e.g. the Prefect test server) may already be our children
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    cases = corpus(run_store, server.getsockname()[1])
    assert len(cases) >= 20
    # the read attack runs with the run store hidden, as verify would run it
    reader = f"print(open({str(run_store / 'problems' / 'part-000000.parquet')!r}).read())"

    start = time.monotonic()
    # The fork bomb runs on its own: runs beside it share the CPU with its 32 spinning processes
    # (no cgroup per run), which can stretch the 0.5 s memory bomb past 3 s and change its reason.
    alone = [c for c in cases if c[0] == "fork bomb"]
    cases = [c for c in cases if c[0] != "fork bomb"] + alone
    verdicts = check_many([AssertTests(c[1], tests=c[3] if len(c) > 3 else "") for c in cases[: -len(alone)]], limits=LIMITS)
    verdicts += check_many([AssertTests(c[1], tests="") for c in alone], limits=LIMITS)
    hidden = check_assert_tests(reader, "", limits=Limits(wall_seconds=15.0), hide=[run_store])
    elapsed = time.monotonic() - start

    wrong = [
        f"{name}: {v.passed=} {v.reason!r}"
        for (name, _, prefixes, *_), v in zip(cases, verdicts, strict=True)
        if v.passed or v.fraction != 0.0 or not v.reason.startswith(prefixes)
    ]
    assert wrong == [], "attacks that worked or were scored for an unexpected reason:\n" + "\n".join(wrong)
    assert not hidden.passed and hidden.reason.startswith("failed: FileNotFoundError"), hidden.reason

    server.setblocking(False)
    with pytest.raises(BlockingIOError):
        server.accept()  # nothing ever connected
    server.close()
    assert tree_digest(run_store) == before
    assert not (Path(str(run_store) + "-moved")).exists()
    time.sleep(0.2)
    assert sandbox_processes() == [], "processes from the corpus survived"
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in children_before] == []

    ok = check_assert_tests("def add(a, b):\n    return a + b\n", "assert add(2, 3) == 5", limits=LIMITS)
    assert ok.passed, ok.reason
    print(f"\n{len(cases)} hostile programs contained in {elapsed:.1f}s")


def test_a_fork_bomb_does_not_starve_runs_beside_it():
    bomb = AssertTests(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        "",
    )
    good = AssertTests(
        "import subprocess\nout = subprocess.run(['echo', 'hi'], capture_output=True).stdout",
        "assert out == b'hi\\n'",
    )
    verdicts = check_many([bomb, good, good, good, good], limits=LIMITS, workers=2)
    assert not verdicts[0].passed
    assert [v.passed for v in verdicts[1:]] == [True] * 4, [v.reason for v in verdicts[1:]]


def test_assert_tests_pass_and_fail_with_the_failing_line():
    solution = "def add(a, b):\n    return a + b\n"
    assert check_assert_tests(solution, "assert add(1, 2) == 3\nassert add(-1, 1) == 0").passed
    bad = check_assert_tests(
        "def add(a, b):\n    return a - b\n",
        "assert add(0, 0) == 0\nassert add(2, 3) == 5",
    )
    assert not bad.passed and bad.fraction == 0.5
    assert bad.reason == "failed: AssertionError at tests.py line 2: assert add(2, 3) == 5; 1 of 2 asserts passed"
    crash = check_assert_tests("def add(a, b):\n    return a + c\n", "assert add(1, 2) == 3")
    assert crash.reason == (
        "failed: NameError: name 'c' is not defined at tests.py line 1: assert add(1, 2) == 3 "
        "(raised at solution.py line 2: return a + c); 0 of 1 asserts passed"
    )
    syntax = check_assert_tests("def add(a, b) return a", "assert add(1, 2) == 3")
    assert syntax.reason.startswith("failed: SyntaxError")


# ---- per-assert accounting ------------------------------------------------------------------

CHECK = """\
def check(candidate):
    assert candidate(0, 0) == 0
    assert candidate(2, 3) == 5, "2 + 3"
    for i in range(50):
        assert candidate(i, 1) == i + 1, f"i = {i}"
    assert candidate(1, 1) == 2

check(add)
"""


def test_instrument_asserts_counts_every_assert_statement_once():
    tests = "assert 1\ndef f(x):\n    for i in x:\n        assert i\nclass C:\n    def m(self):\n        assert 0, 'm'\n"
    tree, sites = instrument_asserts(tests)
    assert sites == [
        AssertSite(1, "assert 1"),
        AssertSite(4, "assert i"),
        AssertSite(7, "assert 0, 'm'"),
    ]
    assert not any(isinstance(node, ast.Assert) for node in ast.walk(tree))
    with warnings.catch_warnings():
        # the hook call must not draw "'str' object is not callable"
        warnings.simplefilter("error")
        compile(tree, "tests.py", "exec")
    with pytest.raises(ValueError, match="not valid Python: .* at tests.py line 1"):
        instrument_asserts("assert (")


def test_assert_fraction_counts_statements_and_keeps_going_after_failures():
    # add is wrong from 25 on: the loop's assert fails (once counted), the others still run
    wrong = check_assert_tests("def add(a, b):\n    return a + b if a < 25 else 0\n", CHECK)
    assert (wrong.passed, wrong.fraction) == (False, 0.75)
    assert wrong.reason == (
        'failed: AssertionError: i = 25 at tests.py line 5: assert candidate(i, 1) == i + 1, f"i = {i}"; 3 of 4 asserts passed'
    )
    right = check_assert_tests("def add(a, b):\n    return a + b\n", CHECK)
    assert (right.passed, right.fraction, right.reason) == (
        True,
        1.0,
        "passed: 4 of 4 asserts passed",
    )
    # a raising assert (or sys.exit inside the candidate) is one failed assert, not the end of the run
    raising = check_assert_tests(
        "import sys\ndef add(a, b):\n    if b == 3:\n        sys.exit(0)\n    return a + b\n",
        CHECK,
    )
    assert (raising.passed, raising.fraction) == (False, 0.75)
    assert raising.reason == (
        'failed: SystemExit: 0 at tests.py line 3: assert candidate(2, 3) == 5, "2 + 3" '
        "(raised at solution.py line 4: sys.exit(0)); 3 of 4 asserts passed"
    )


def test_asserts_that_never_ran_count_as_failed():
    slow = "import time\ndef add(a, b):\n    if a == 3:\n        time.sleep(60)\n    return a + b\n"
    killed = check_assert_tests(slow, CHECK, limits=Limits(wall_seconds=1.5))
    # the first two passed; the loop's passed for i < 3 but was killed at i = 3: it counts as failed
    assert (killed.passed, killed.fraction) == (False, 0.5)
    assert killed.reason == "timeout: killed after 1.5s wall clock; 2 of 4 asserts passed"
    both = check_assert_tests(
        slow.replace("return a + b", "return a * b"),
        CHECK,
        limits=Limits(wall_seconds=1.5),
    )
    assert both.fraction == 0.25 and both.reason == (
        'failed: AssertionError: 2 + 3 at tests.py line 3: assert candidate(2, 3) == 5, "2 + 3"; '
        "1 of 4 asserts passed; then timeout: killed after 1.5s wall clock"
    )
    # a crash outside the asserts: the assert that ran last is not counted either (it may have been cut short)
    crashed = check_assert_tests(
        "def add(a, b):\n    return a + b\n",
        "assert add(1, 1) == 2\nassert add(2, 2) == 4\nadd(None, 1)\nassert add(0, 0) == 0",
    )
    assert crashed.fraction == 1 / 3 and crashed.reason.startswith("failed: TypeError: unsupported operand")
    assert crashed.reason.endswith("at tests.py line 3: add(None, 1); 1 of 3 asserts passed"), crashed.reason
    # two asserts taking turns in a long loop: the report stays small; after ENTER_RECORDS changes of
    # site, every site entered since counts as maybe cut short
    turns = "for i in range(5000):\n    assert f(i) >= 0\n    assert f(i) < 10**9\nassert f(0) == 0"
    fast = check_assert_tests("def f(i):\n    return i\n", turns)
    assert (fast.passed, fast.fraction) == (True, 1.0), fast.reason
    hang = "import time\ndef f(i):\n    if i == 4000:\n        time.sleep(60)\n    return i\n"
    late = check_assert_tests(hang, turns, limits=Limits(wall_seconds=1.5))
    assert (late.passed, late.fraction) == (False, 0.0), late.reason
    branch = check_assert_tests("x = 1", "if x == 2:\n    assert x\nassert x == 1")
    assert (branch.passed, branch.fraction) == (False, 0.5)
    assert branch.reason == "failed: the assert at tests.py line 2 never ran: assert x; 1 of 2 asserts passed"
    early = check_assert_tests("import os\nos._exit(0)", "assert True")
    assert (early.passed, early.fraction) == (False, 0.0)
    assert early.reason == "failed: the solution ended (exit 0) before the tests ran; 0 of 1 asserts passed"


def test_a_solution_cannot_forge_the_assert_counts():
    # Everything a solution can name without walking frames or the gc: __main__'s globals, argv,
    # its command line, every fd (the report pipe among them), stdout; fake records on all of them.
    forger = (
        "import os, sys, __main__\n"
        "names = {v if isinstance(v, bytes) else str(v).encode() for v in vars(__main__).values()}\n"
        "names |= set(open('/proc/self/cmdline', 'rb').read().split(b'\\0')) | {a.encode() for a in sys.argv}\n"
        "names |= {n.encode() for n in vars(__main__)}\n"
        "fake = b''.join(b'%s P %d\\n%s END\\n' % (k, i, k) for k in names if b' ' not in k for i in range(3))\n"
        "def add(a, b):\n"
        "    for fd in range(1, 1024):\n"
        "        try:\n"
        "            os.write(fd, b'\\n' + fake)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return a - b\n"
    )
    verdict = check_assert_tests(forger, "assert add(0, 0) == 0\nassert add(2, 3) == 5\nassert add(1, 1) == 2")
    # its fake records reach nothing; writing on its own answer pipe only garbles its answers
    assert not verdict.passed and verdict.fraction <= 1 / 3, verdict.reason
    # patching os.write does not show it the records (the harness bound os.write before)
    spy = (
        "import os\nseen = []\nreal = os.write\nos.write = lambda fd, b: (seen.append(b), real(fd, b))[1]\n"
        "def add(a, b):\n    return a + b\n"
    )
    spied = check_assert_tests(spy, "assert add(1, 1) == 2\nassert not any(b' P ' in b for b in seen)")
    assert spied.passed, spied.reason
    # closing every fd loses the report: the rest counts as failed, never as passed
    closer = "import os\ndef add(a, b):\n    os.closerange(3, 1024)\n    return a + b\n"
    closed = check_assert_tests(closer, "assert add(1, 1) == 2\nassert add(1, 2) == 3")
    assert not closed.passed and closed.fraction == 0.0, closed.reason


def test_an_always_equal_answer_is_not_plain_data():
    # the solution's objects never reach a comparison: only plain data crosses to the harness
    cheat = "class Anything:\n    def __eq__(self, other):\n        return True\ndef add(a, b):\n    return Anything()\n"
    verdict = check_assert_tests(cheat, "assert add(2, 3) == 5")
    assert not verdict.passed and "a value of type Anything is not plain data" in verdict.reason, verdict.reason
    typed = check_assert_tests(cheat, "assert type(add(2, 3)) is int and add(2, 3) == 5")
    assert not typed.passed  # typed checks in the tests close it


def test_tests_are_not_readable_by_the_solution():
    snoop = (
        # every plain file in /tmp and in the working folder (a repo under /tmp shows up as a
        # folder holding the read-only venv: folders are skipped)
        "import os\nseen = b''\nfor folder in ('/tmp', '.'):\n    for name in os.listdir(folder):\n"
        "        path = os.path.join(folder, name)\n        if os.path.isfile(path):\n"
        "            seen += open(path, 'rb').read()\n"
        "for fd in os.listdir('/proc/self/fd'):\n    try:\n        seen += os.pread(int(fd), 1 << 20, 0)\n"
        "    except OSError:\n        pass\nFOUND = b'MARKER_' + b'7f3a' in seen  # not spelled out: solution.py is readable\n"
    )
    verdict = check_assert_tests(snoop, "# MARKER_7f3a\nassert not FOUND")
    assert verdict.passed, verdict.reason


# The solution's process is a fork of the harness (harness/runner.py _fork_solution): it must hold none of
# what the harness is given afterwards. This probe reads every readable byte of its own memory
# (ctypes, /proc/self/maps) and looks for a string constant of the test program; it also counts its
# open fds (0, 1, 2 and its two pipes only: no secret memfd, no report pipe). The marker is never
# spelled out in the probe, and a control built at run time shows that the scan finds what is there.
FORK_PROBE = """
import ctypes, gc, os
HEAD, TAIL = b"rlvr-fork-" + b"probe-", b"secret-9d41"
CONTROL = b"".join([b"rlvr-fork-", b"probe-", b"control-77"])  # in memory: the scan must see it

def _regions():
    for line in open("/proc/self/maps"):
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if parts[1].startswith("r") and not (len(parts) > 5 and parts[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
            yield lo, hi

def scan():
    found = set()
    for lo, hi in _regions():
        try:
            data = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        at = data.find(HEAD)
        while at >= 0:
            found.add(data[at + len(HEAD): at + len(HEAD) + len(TAIL)] == TAIL and "secret" or "head")
            if data[at + len(HEAD): at + len(HEAD) + 10] == b"control-77":
                found.add("control")
            at = data.find(HEAD, at + 1)
    return sorted(found)

def open_fds():
    n = 0
    for fd in range(4096):
        try:
            os.fstat(fd)
            n += 1
        except OSError:
            pass
    return n
"""


def test_the_forked_solution_process_holds_nothing_of_the_tests():
    tests = (
        "LABEL = 'rlvr-fork-probe-secret-9d41'  # the marker: in the test program, never in the solution's process\n"
        "found = scan()\n"
        "assert 'control' in found  # the scan sees its own memory\n"
        "assert 'secret' not in found\n"
        "assert open_fds() == 5\n"
    )
    verdict = check_assert_tests(FORK_PROBE, tests, limits=Limits(wall_seconds=20, cpu_seconds=10))
    assert verdict.passed, verdict.reason


def test_patching_the_forked_harness_changes_only_the_solutions_own_answers():
    # The fork starts with the harness's modules loaded (its serve and wire, _json, builtins): patching them
    # changes what this solution's own process sends, never how the harness counts, and nothing of the
    # next program (its own sandbox, its own harness).
    poisoner = (
        "import _json, builtins, os, sys\n"
        "for m in (sys.modules['harness.serve'], sys.modules['harness.wire']):\n"
        "    m.encode = lambda x: 5\n"
        "    m.decode = lambda x: [1, 1]\n"
        "    m.dumps = lambda x: b'[\"ok\", 5]\\n'\n"
        "    m.loads = lambda s: ['ok', 5]\n"
        "_json.make_encoder = _json.make_scanner = None\n"
        "builtins.AssertionError = type('Never', (Exception,), {})\n"
        "os.write = lambda fd, data: len(data)\n"
        "def add(a, b):\n    return a + b + 1\n"
    )
    tests = "assert add(2, 3) == 5\nassert add(1, 1) == 2\nassert add(0, 0) == 0"
    poisoned, honest = check_many([AssertTests(poisoner, tests), AssertTests("def add(a, b):\n    return a + b\n", tests)])
    # its patched wire garbles its own answers (the harness gets no names from it): 0, never a pass
    assert not poisoned.passed and poisoned.fraction == 0.0, poisoned.reason
    assert honest.passed, honest.reason


def test_the_solution_cannot_read_or_trace_the_harness():
    # the harness (its parent) is non-dumpable: no /proc/<pid>/mem, fd, environ or ptrace for the
    # solution, which shares its uid when the sandbox runs as an ordinary user (scripts/test-as-user.sh)
    solution = (
        "import ctypes, os\n"
        "def probe():\n"
        "    got = []\n"
        "    pid = os.getppid()\n"
        "    for what in ('mem', 'environ', 'fd', 'maps'):\n"
        "        try:\n"
        "            path = f'/proc/{pid}/{what}'\n"
        "            os.listdir(path) if what == 'fd' else open(path, 'rb').read(64)\n"
        "            got.append(what)\n"
        "        except OSError:\n"
        "            pass\n"
        "    if ctypes.CDLL(None).ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH\n"
        "        got.append('ptrace')\n"
        "    return got\n"
    )
    verdict = check_assert_tests(solution, "assert probe() == []")
    assert verdict.passed, verdict.reason
    opened = check_assert_tests(solution.replace("pid = os.getppid()", "pid = os.getpid()"), "assert 'maps' in probe()")
    assert opened.passed, opened.reason  # the probe itself works: its own process is readable


def test_the_harness_wire_is_json_without_importing_it():
    # wire.loads/dumps are _json's C scanner and encoder (json's module costs 12 ms a start): the
    # same text and values as json's own, the same refusals (ValueError, RecursionError), and no re
    import json
    import subprocess
    import sys
    from pathlib import Path

    from rlvr.verify.code.harness import wire

    values = [
        None,
        True,
        0,
        -1,
        10**40,
        1.5,
        -0.0,
        1e308,
        float("inf"),
        float("-inf"),
        "",
        'a"b\\c\n\u2028\x00',
        "ünï \U0001f600",
        [],
        {},
        [1, [2, [3, {"k": ["v", None]}]]],
        {"a": 1, "": [True, False]},
    ]
    for v in values:
        line = wire.dumps(v)
        assert line == json.dumps(v, separators=(",", ":")).encode() + b"\n"
        assert wire.loads(line) == json.loads(line) and wire.loads(line.decode()) == json.loads(line)
    nan = wire.loads(wire.dumps(float("nan")))
    assert nan != nan
    texts = ["  [1, 2] \r\n", '\t"x"', '{"a":1,"a":2}', "1e400", "-1e-400", "12345678901234567890123", "[1.0,2E3]"]
    for t in texts:
        assert repr(wire.loads(t)) == repr(json.loads(t))
    for bad in ["", " ", "[1,]", "[1] [2]", '{"a"}', "nan", "01", '"\x01"', '"\\ud800', "[" * 10, "tru", "{'a': 1}", '"abc']:
        with pytest.raises(ValueError):
            json.loads(bad)
        with pytest.raises(ValueError):
            wire.loads(bad)
    with pytest.raises(ValueError):
        wire.loads(b"\xff\xfe")
    with pytest.raises(RecursionError):
        wire.loads("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TypeError):
        wire.dumps(object())
    with pytest.raises(ValueError):  # a cycle: json's own refusal, and the next call still works
        cyclic: list = []
        cyclic.append(cyclic)
        wire.dumps(cyclic)
    assert wire.dumps([1]) == b"[1]\n"
    # the whole package imported as the sandbox imports it: `harness`, from the folder holding it
    folder = str(Path(wire.__file__).parents[1])
    probe = f"import sys; sys.path.insert(0, {folder!r}); import harness.start, harness.runner; "
    probe += "print(sorted({'re', 'enum', 'json'} & set(sys.modules)))"
    imported = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "[]", imported.stdout


def test_run_program_statuses_and_reasons():
    echo = run_program("print(input()[::-1])", stdin="abc\n")
    assert (echo.status, echo.returncode, echo.stdout) == ("ok", 0, "cba\n")
    slow = run_program("import time\ntime.sleep(60)", limits=Limits(wall_seconds=1.0))
    assert (slow.status, slow.reason, slow.returncode) == (
        "timeout",
        "timeout: killed after 1.0s wall clock",
        None,
    )
    assert slow.seconds < 5
    mem = run_program("x = bytearray(2 * 1024**3)", limits=Limits(memory_mb=256))
    assert mem.status == "memory" and mem.reason.startswith("memory: exceeded 256 MiB")
    err = run_program("raise SystemExit(7)")
    assert (err.status, err.returncode, err.reason) == ("error", 7, "error: exit 7")
    loud = run_program("print('z' * 5000)", limits=Limits(output_bytes=1000))
    assert loud.status == "output_limit" and len(loud.stdout) == 1000


def test_io_tests_give_partial_credit_and_normalise_whitespace():
    adder = "a, b = map(int, input().split())\nprint(a + b)"
    cases = [("1 2\n", "3\n"), ("2 2", "  4  "), ("5 5", "11"), ("0 0", "0\n\n")]
    verdict = check_io_tests(adder, cases)
    assert not verdict.passed and verdict.fraction == 0.75
    assert verdict.reason == "failed: 3 of 4 tests passed; first failure test 3 of 4: expected '11', got '10'"
    assert check_io_tests(adder, cases[:2]).passed
    crash = check_io_tests("print(1/0)", [("", "1")])
    assert crash.reason.startswith("failed: 0 of 1 tests passed; first failure test 1 of 1: error: exit 1: ZeroDivisionError")


def test_check_many_keeps_input_order():
    items = [
        AssertTests("x = 1", "assert x == 1"),
        IOTests("print(input())", [("a", "a"), ("b", "c")]),
        AssertTests("x = 2", "assert x == 1"),
        IOTests("print(2)", [("", "2")]),
    ]
    verdicts = check_many(items)
    assert [v.passed for v in verdicts] == [True, False, False, True]
    assert verdicts[1].fraction == 0.5


def test_extract_code():
    assert extract_code("text\n```python\nprint(1)\n```\nmore\n```py\nprint(2)\n```") == "print(2)\n"
    assert extract_code("```python\na = 1\n```\n```\nplain\n```") == "a = 1\n"
    assert extract_code("```\nx = 3\n```") == "x = 3\n"
    assert extract_code("```Python3 \nz = 1\n```") == "z = 1\n"
    assert extract_code("Reply in one ```python block.\n\n```python\nreal = 1\n```") == "real = 1\n"
    assert extract_code("no code at all") is None
    assert extract_code("```python\nunclosed = 1\n") is None


def test_limits_are_validated():
    with pytest.raises(ValueError, match="cpu_seconds"):
        Limits(cpu_seconds=0)


def test_without_user_namespaces_an_ordinary_user_is_told_how_to_fix_it(monkeypatch, tmp_path):
    from rlvr.verify.code import bwrap

    monkeypatch.setattr(bwrap.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(bwrap, "bwrap_binary", lambda: "/bin/false")  # a bwrap whose probe fails
    with pytest.raises(bwrap.SandboxError, match="cannot start as an ordinary user here.*unprivileged user namespaces"):
        bwrap.sandbox_mode.__wrapped__()


def test_a_code_run_refuses_to_start_without_a_sandbox(monkeypatch, tmp_path):
    """Before the run folder exists (preflight), and on every later start (prepare), never mid-run."""
    import rlvr.verify.code as code
    from rlvr import stages
    from rlvr.checks.preflight import PreflightError
    from rlvr.checks.start import create_or_open
    from rlvr.config import Config

    cfg = Config.model_validate({"task": {"name": "stdio"}})
    create_or_open(tmp_path / "run", cfg, 1)  # the sandbox works here: the run is created
    monkeypatch.setattr(code, "sandbox_problem", lambda: "the code sandbox cannot start (test)")
    with pytest.raises(PreflightError, match="has code problems, and the code sandbox cannot start"):
        create_or_open(tmp_path / "new", cfg, 1)
    assert not (tmp_path / "new").exists()
    with pytest.raises(stages.SandboxUnavailable, match="the task has code problems, and the code sandbox cannot start"):
        stages.prepare(tmp_path / "run")
    assert not (tmp_path / "run" / "problems").exists()
