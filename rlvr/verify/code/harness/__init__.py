"""The program that runs INSIDE the sandbox: this package, compiled by the host and copied in
read-only as /opt/rlvr/harness/*.pyc (rlvr.verify.code.launcher.harness_files); the host itself
imports only wire.py (its tests). Standard library only: the sandbox has nothing else. start.py
is the script the sandbox runs; three roles, chosen by its first argument:

    start.py exec CPU MEM FSIZE NPROC UID -- PROGRAM...   limits.py: limits, drop to UID, exec PROGRAM
    start.py tests CPU MEM FSIZE NPROC UID SECRET_FD      runner.py: run the tests against a solution
                                                          process (proxy.py: its functions as seen here)
    start.py serve FD_IN FD_OUT                           serve.py: the solution process: run prompt.py
                                                          (the prompt's helpers) and solution.py as the
                                                          module "solution", answer calls read on
                                                          FD_IN on FD_OUT (forked by `tests`)

wire.py is the plain data both processes speak.

`tests` (the trusted side) first makes itself non-dumpable and forks `serve`, the solution's
process: before anything secret is read, so the fork's memory holds nothing the solution may not
see; the fork closes every fd but its two pipes, takes the rlimits CPU..NPROC and its own uid
(when the sandbox starts as root), and never returns to the `tests` code. Only then does `tests`
read its orders from the memfd SECRET_FD and close it: a JSON header line (report fd, key, hook
placeholder, budget of "entered" records, its own uid, the names the tests need from the solution,
the prompt's helpers) then the marshal'd, instrumented test program (rlvr.verify.code.asserts). It
drops to its own uid and stays non-dumpable, so the solution can neither ptrace it, read its memory
or fds through /proc, nor signal it. The tests run HERE, on proxies: calling
`candidate(args)` sends the arguments as plain data (JSON with tags for tuple/set/frozenset/dict/
bytes/complex, and the exact numbers Fraction and Decimal) to the solution process, which calls its function and sends the result back the
same way; the harness decodes it into fresh builtins. So every comparison is between objects the
harness built: an `__eq__` that always returns True never reaches an assert, and nothing the
solution does (frames, gc, trace functions, patched builtins or AssertionError, sys.exit, forged
output) touches the interpreter that counts the asserts.

The prompt's helpers (HumanEval/32's `poly`, /38's `encode_cyclic`, /50's `encode_shift`; see
rlvr.verify.code.prompt) run HERE before the tests, so the tests call the prompt's own and never
the solution's; the solution's process runs them too, before solution.py, so the solution may use
them, but for those that name an entry point when they run (`OPS = {"square": square}`), which it
runs after solution.py (prompt.PromptFacts.solution_side). A builtin subclass result (defaultdict, namedtuple, IntEnum, str subclass) crosses as the
builtin value it holds (an OrderedDict as an OrderedDict, whose order compares), read through the base type's slots, never its own methods. Semantics of a
call: arguments cross as copies, and a call that changed them in place (a list sorted, a dict
filled) sends them back: the harness changes its own objects the same way, item by item, so the
tests see what one process would show (an item moved to another place arrives there as a copy).

The tests run as a script would: in a module `__main__` with argv ["tests.py"] (unittest.main()
finds their TestCases and none of the harness's arguments), and their own SystemExit(0) (unittest's
after a pass, sys.exit()) ends them as finished; any other exit code fails the run. A solution's
SystemExit never reaches here: out of a call it is a SolutionError.

A solution's exception arrives as the nearest class of its MRO that the tests can name without the
solution: one the prompt's code defines (`InvalidAge(ValueError)`, run on both sides; the solution's
own subclass of it arrives as it) or one of a module the tests have imported
(`statistics.StatisticsError`, for the solution's subclass of it too; a test runner's,
`unittest.SkipTest`, aside), else its nearest builtin class. It is rebuilt as it was, from plain data
and without running the prompt's or a module's constructor (`cls.__new__` of its builtin base): its
args (`KeyError('b').args[0] == 'b'`, a message with its newlines, whole), its attributes (its
`__dict__`: the prompt's `InsufficientFunds(balance, amount)` that builds its message, an
`HTTPError(message, status=500)` with the status it was given, `json.JSONDecodeError`'s pos) and a
builtin's member slots (an OSError's filename). When its args or attributes are not plain data it
arrives as its nearest builtin class built from its message, else as SolutionError.

What it decides: which asserts passed (records on the report pipe, see rlvr.verify.code.asserts).
What it does not defend: a solution that computes the right answers in a way the task did not
intend (hard-coding the test cases); a test that reads an argument after the call sees what the
solution did to it, as in one process (`candidate(xs) == sum(xs)` trusts the solution not to
empty `xs`); values other than plain data and its subclasses (a numpy array) cannot cross and fail;
a solution may raise an exception class named as one the tests define (its name is all that
crosses), which a test's `except` of that class then catches; an exception's state kept in
`__slots__` of its own class, or its `__cause__` and traceback, does not cross; what the solution prints never
reaches the tests' process (`contextlib.redirect_stdout` in a test captures nothing);
tests whose failures do not end the program (`unittest.main(exit=False)`, a test that prints a
failure) pay a program with no asserts for running to the end, as ground truth written that way.
Started by an ordinary user (a user namespace, one uid), the solution shares the harness's uid: it
cannot read its memory or fds (non-dumpable), but it can signal it, which only ends its own run
with 0. The solution's process starts as a copy of this one before the tests were read: it finds
the harness's modules and their imports loaded and may patch them, in its own process only
(tests/integration/test_sandbox.py: a probe of its whole memory and fds, and a solution that patches them).

Test: tests/integration/test_sandbox.py, tests/integration/test_code_trust.py, tests/integration/test_redteam.py.
"""
