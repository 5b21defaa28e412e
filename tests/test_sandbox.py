"""The code sandbox against real bwrap: an adversarial corpus, then the ordinary checks.

Every hostile program exits 0 (and so would pass) only if its attack worked; the corpus test
asserts that each one scores 0 with the expected reason, that a temporary "run store" is
byte-for-byte unchanged, that nothing listened to on 127.0.0.1 was reached, that no process of
the corpus outlives it, and that the sandbox still runs a correct program afterwards.
Run: .venv/bin/python -m pytest -q tests/test_sandbox.py   (needs root, ~15 s on 2 cores)
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from rlvr.sandbox import (
    UID_BASE,
    UID_SPAN,
    AssertTests,
    IOTests,
    Limits,
    check_assert_tests,
    check_io_tests,
    check_many,
    extract_code,
    run_program,
)

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0,
    reason="the sandbox drops to per-run uids, so it must start as root",
)

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
    (root / "problems" / "part-000000.parquet").write_bytes(
        b"PAR1 ground truth: the answer is 42"
    )
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


def corpus(store: Path, port: int) -> list[tuple[str, str, tuple[str, ...]]]:
    """(name, program, accepted reason prefixes). Each program exits 0 only if its attack worked."""
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
            ("failed: socket.gaierror",),
        ),
        (
            "write into the run store",
            f"open({str(store / 'evil.txt')!r}, 'w').write('x')",
            ("failed: OSError: [Errno 30] Read-only file system",),
        ),
        (
            "overwrite a run-store file",
            f"open({str(data)!r}, 'w').write('tampered')",
            ("failed: OSError: [Errno 30] Read-only file system",),
        ),
        (
            "delete a run-store file",
            f"import os\nos.remove({str(data)!r})",
            ("failed: OSError: [Errno 30]",),
        ),
        (
            "rename the run store",
            f"import os\nos.rename({str(store)!r}, {str(store) + '-moved'!r})",
            ("failed: OSError: [Errno 30]", "failed: PermissionError"),
        ),
        (
            "write into /root",
            "open('/root/evil', 'w').write('x')",
            ("failed: PermissionError", "failed: OSError"),
        ),
        (
            "write into /etc",
            "open('/etc/evil', 'w').write('x')",
            ("failed: PermissionError", "failed: OSError"),
        ),
        (
            "poison the venv",
            f"open({sys.prefix + '/evil.pth'!r}, 'w').write('import os')",
            ("failed: PermissionError", "failed: OSError"),
        ),
        (
            "read /etc/shadow",
            "print(open('/etc/shadow').read())",
            ("failed: PermissionError",),
        ),
        (
            "read secrets in /root",
            "import os\nprint(os.listdir('/root/.pyenv/..'))\nassert len(os.listdir('/root')) > 1",
            ("failed: AssertionError",),
        ),
        (
            "write /dev/shm",
            "open('/dev/shm/x', 'w').write('x')",
            ("failed: PermissionError",),
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
            ("failed: PermissionError",),
        ),
        (
            "kill everything",
            "import os\nos.kill(-1, 9)\nimport time\ntime.sleep(1)",
            ("failed: ProcessLookupError", "killed: SIGKILL"),
        ),
        ("become root", "import os\nos.setuid(0)", ("failed: PermissionError",)),
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
            "print(open('/proc/1/environ').read())",
            ("failed: PermissionError",),
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
            ("failed: the program exited with 0 before",),
        ),
        (
            "os._exit(0) before the tests",
            "import os\nos._exit(0)",
            ("failed: the program exited with 0 before",),
        ),
    ]


def sandbox_processes() -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["uids", "cmdline"]):
        uid = proc.info["uids"].real if proc.info["uids"] else -1
        cmd = " ".join(proc.info["cmdline"] or [])
        if (
            UID_BASE <= uid < UID_BASE + UID_SPAN
            or "bwrap" in cmd
            or "/tmp/harness.py" in cmd
        ):
            found.append(proc)
    return found


def test_adversarial_corpus_is_contained(run_store):
    before = tree_digest(run_store)
    # other fixtures of the session (e.g. the Prefect test server) may already be our children
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    cases = corpus(run_store, server.getsockname()[1])
    assert len(cases) >= 20
    # the read attack runs with the run store hidden, as verify would run it
    reader = (
        f"print(open({str(run_store / 'problems' / 'part-000000.parquet')!r}).read())"
    )

    start = time.monotonic()
    # The fork bomb runs on its own: runs beside it share the CPU with its 32 spinning processes
    # (no cgroup per run), which can stretch the 0.5 s memory bomb past 3 s and change its reason.
    alone = [c for c in cases if c[0] == "fork bomb"]
    cases = [c for c in cases if c[0] != "fork bomb"] + alone
    verdicts = check_many(
        [AssertTests(code, tests="") for _, code, _ in cases[: -len(alone)]],
        limits=LIMITS,
    )
    verdicts += check_many(
        [AssertTests(code, tests="") for _, code, _ in alone], limits=LIMITS
    )
    hidden = check_assert_tests(reader, "", limits=LIMITS, hide=[run_store])
    elapsed = time.monotonic() - start

    wrong = [
        f"{name}: {v.passed=} {v.reason!r}"
        for (name, _, prefixes), v in zip(cases, verdicts, strict=True)
        if v.passed or v.fraction != 0.0 or not v.reason.startswith(prefixes)
    ]
    assert wrong == [], (
        "attacks that worked or were scored for an unexpected reason:\n"
        + "\n".join(wrong)
    )
    assert not hidden.passed and hidden.reason.startswith(
        "failed: FileNotFoundError"
    ), hidden.reason

    server.setblocking(False)
    with pytest.raises(BlockingIOError):
        server.accept()  # nothing ever connected
    server.close()
    assert tree_digest(run_store) == before
    assert not (Path(str(run_store) + "-moved")).exists()
    time.sleep(0.2)
    assert sandbox_processes() == [], "processes from the corpus survived"
    assert [
        p
        for p in psutil.Process().children(recursive=True)
        if p.pid not in children_before
    ] == []

    ok = check_assert_tests(
        "def add(a, b):\n    return a + b\n", "assert add(2, 3) == 5", limits=LIMITS
    )
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
    assert [v.passed for v in verdicts[1:]] == [True] * 4, [
        v.reason for v in verdicts[1:]
    ]


def test_assert_tests_pass_and_fail_with_the_failing_line():
    solution = "def add(a, b):\n    return a + b\n"
    assert check_assert_tests(
        solution, "assert add(1, 2) == 3\nassert add(-1, 1) == 0"
    ).passed
    bad = check_assert_tests(
        "def add(a, b):\n    return a - b\n",
        "assert add(0, 0) == 0\nassert add(2, 3) == 5",
    )
    assert not bad.passed and bad.fraction == 0.0
    assert (
        bad.reason == "failed: AssertionError at tests.py line 2: assert add(2, 3) == 5"
    )
    crash = check_assert_tests(
        "def add(a, b):\n    return a + c\n", "assert add(1, 2) == 3"
    )
    assert (
        crash.reason
        == "failed: NameError: name 'c' is not defined at solution.py line 2: return a + c"
    )
    syntax = check_assert_tests("def add(a, b) return a", "assert add(1, 2) == 3")
    assert syntax.reason.startswith("failed: SyntaxError")


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
    assert (
        verdict.reason
        == "failed: 3 of 4 tests passed; first failure test 3 of 4: expected '11', got '10'"
    )
    assert check_io_tests(adder, cases[:2]).passed
    crash = check_io_tests("print(1/0)", [("", "1")])
    assert crash.reason.startswith(
        "failed: 0 of 1 tests passed; first failure test 1 of 1: error: exit 1: ZeroDivisionError"
    )


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
    assert (
        extract_code("text\n```python\nprint(1)\n```\nmore\n```py\nprint(2)\n```")
        == "print(2)\n"
    )
    assert extract_code("```python\na = 1\n```\n```\nplain\n```") == "a = 1\n"
    assert extract_code("```\nx = 3\n```") == "x = 3\n"
    assert extract_code("```Python3 \nz = 1\n```") == "z = 1\n"
    assert (
        extract_code("Reply in one ```python block.\n\n```python\nreal = 1\n```")
        == "real = 1\n"
    )
    assert extract_code("no code at all") is None
    assert extract_code("```python\nunclosed = 1\n") is None


def test_limits_are_validated():
    with pytest.raises(ValueError, match="cpu_seconds"):
        Limits(cpu_seconds=0)
