"""The script the sandbox runs (/opt/rlvr/harness/start.pyc: rlvr.verify.code.bwrap.HARNESS): it
imports the harness package from the folder it lies in and runs the role its first argument names
(exec, tests or serve; see the package's docstring). Standard library only; importing it runs nothing.

Test: tests/integration/test_sandbox.py.
"""

import os
import sys


def main(argv):
    # -I leaves the script's own folder off sys.path: the package is imported from its parent, which
    # leaves sys.path again at once, so that the tests and the solution import nothing from /opt/rlvr
    sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
    try:
        from harness import limits, runner, serve
    finally:
        del sys.path[0]
    if argv[0] == "exec":
        limits.run_exec(argv[1:])
    elif argv[0] == "serve":
        serve.run_serve(int(argv[1]), int(argv[2]))
    elif argv[0] == "tests":
        runner.run_tests(argv[1:])
    else:
        raise SystemExit(f"harness: unknown role {argv[0]!r}")


if __name__ == "__main__":
    sys.set_int_max_str_digits(0)  # huge integers are data too (the answer of a factorial task)
    main(sys.argv[1:])
