"""The program that runs INSIDE the sandbox (compiled by the host, copied in read-only as
/opt/rlvr/harness.pyc: rlvr.verify.code.launcher.harness_code; never imported by the host). Standard library only: the sandbox has
nothing else. Three roles, chosen by the first argument:

    harness.py exec CPU MEM FSIZE NPROC UID -- PROGRAM...   limits, drop to UID, exec PROGRAM
    harness.py tests CPU MEM FSIZE NPROC UID SECRET_FD      run the tests against a solution process
    harness.py serve FD_IN FD_OUT                           the solution process: run prompt.py (the
                                                            prompt's helpers) and solution.py as the
                                                            module "solution", answer calls read on
                                                            FD_IN on FD_OUT (forked by `tests`)

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
this module and its imports loaded and may patch them, in its own process only (tests/integration/test_sandbox.py:
a probe of its whole memory and fds, and a solution that patches them).
"""

import _json  # json's own C scanner and encoder; see loads/dumps
import builtins
import marshal
import os
import resource
import sys

AFTER_SOLUTION = "# rlvr: the prompt's code that needs the solution, run after it"  # rlvr.verify.code.prompt's
# tags of the non-JSON builtins; every JSON object on the wire is exactly one of these
_TAGS = ("tuple", "set", "frozenset", "dict", "odict", "bytes", "complex", "fraction", "decimal")
MAX_LINE = 64 << 20  # one message; a solution returning more fails that call
# exceptions a solution's call may raise in the harness as themselves (a test may expect one);
# StopIteration and StopAsyncIteration arrive as RuntimeError (PEP 479: out of a call, they would end
# the test's own loop, `all(map(candidate, ...))`, as if it had passed)
SAFE_ERRORS = frozenset(
    n
    for n, v in vars(builtins).items()
    if isinstance(v, type) and issubclass(v, Exception) and not issubclass(v, (StopIteration, StopAsyncIteration))
)


class NotPlainData(BaseException):
    """A value that cannot cross the process boundary (not one of the JSON-like builtins). Not an
    Exception (and not the TypeError it once was): a test's `except TypeError:` or `except Exception:`
    must not take the harness's refusal for an error the solution raised (red team round 12: a
    solution returning `object()` passed every test that expects a TypeError)."""


def encode(x):
    """x as JSON-ready data. Exact builtins as they are; a subclass of one (a defaultdict, a
    namedtuple, an IntEnum, a str subclass) as the builtin value it holds, read through the base
    type's own slots (`str.__str__(x)`, `list.__iter__(x)`, ...), so no method it overrides (an
    `__eq__`, `__iter__` or `__str__` that lies) is ever asked; any other object is NotPlainData.

    >>> encode((1, [2.5, None], {"a": {3}}))
    {'tuple': [1, [2.5, None], {'dict': [['a', {'set': [3]}]]}]}
    >>> encode(True), encode(10**30)
    (True, 1000000000000000000000000000000)
    >>> import collections; encode(collections.defaultdict(int, a=1)), encode(collections.namedtuple("P", "x y")(1, 2))
    ({'dict': [['a', 1]]}, {'tuple': [1, 2]})
    >>> encode(collections.OrderedDict([("b", 1), ("a", 2)]))
    {'odict': [['b', 1], ['a', 2]]}
    """
    t = type(x)
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        return [encode(v) for v in x]
    if t is tuple or t is set or t is frozenset:
        return {t.__name__: [encode(v) for v in x]}
    if t is dict:
        return {"dict": [[encode(k), encode(v)] for k, v in x.items()]}
    if t is bytes:
        return {"bytes": x.hex()}
    if t is complex:
        return {"complex": [x.real, x.imag]}
    # exact values of the standard library (a Fraction, a Decimal: a solution returning 1/2 exactly),
    # found without importing their modules: a value of one means its module is loaded
    if t is getattr(sys.modules.get("fractions"), "Fraction", None):
        return {"fraction": [x.numerator, x.denominator]}
    if t is getattr(sys.modules.get("decimal"), "Decimal", None):
        return {"decimal": str(x)}
    # an OrderedDict (or a subclass) crosses as one: two of them compare in order, which a plain dict
    # would not (the order a solution returns would go unchecked); read through OrderedDict's own slots
    od = getattr(sys.modules.get("collections"), "OrderedDict", None)
    if od is not None and isinstance(x, od):
        return {"odict": [[encode(k), encode(dict.__getitem__(x, k))] for k in list(od.__iter__(x))]}
    return encode(_builtin_value(x))


def _builtin_value(x):
    """The exact builtin value inside an instance of a builtin's subclass (see encode)."""
    if isinstance(x, int):  # bool cannot be subclassed; an IntEnum is its int
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, (bytes, bytearray)):
        return bytes(memoryview(x))
    if isinstance(x, complex):
        return complex(complex.real.__get__(x), complex.imag.__get__(x))
    if isinstance(x, list):
        return list(list.__iter__(x))
    if isinstance(x, tuple):
        return tuple(tuple.__iter__(x))
    if isinstance(x, frozenset):
        return frozenset(frozenset.__iter__(x))
    if isinstance(x, set):
        return set(set.__iter__(x))
    if isinstance(x, dict):  # (an OrderedDict never comes here: encode keeps it one)
        return {k: dict.__getitem__(x, k) for k in list(dict.__iter__(x))}
    raise NotPlainData(
        f"a value of type {type(x).__name__} is not plain data (only None, bool, int, float, str, bytes, complex, "
        "list, tuple, set, frozenset, dict and their subclasses, Fraction and Decimal can be compared)"
    )


def decode(x):
    """The inverse of encode, building fresh builtins; anything else raises NotPlainData.

    >>> decode(encode((1, [2.5, None], {"a": frozenset({3})})))
    (1, [2.5, None], {'a': frozenset({3})})
    >>> decode({"evil": 1})
    Traceback (most recent call last):
    ...
    harness.NotPlainData: unknown tag ['evil']
    """
    t = type(x)
    if x is None or t is bool or t is int or t is float or t is str:
        return x
    if t is list:
        return [decode(v) for v in x]
    if t is not dict or len(x) != 1 or next(iter(x)) not in _TAGS:
        raise NotPlainData(f"unknown tag {sorted(x) if t is dict else t.__name__}")
    tag, body = next(iter(x.items()))
    if tag == "bytes":
        return bytes.fromhex(body)
    if tag == "decimal":  # built here from its text, by the decimal module itself
        if type(body) is not str or len(body) > 4096:
            raise NotPlainData("a decimal is not a short string")
        import decimal

        try:
            return decimal.Decimal(body)
        except decimal.InvalidOperation:
            raise NotPlainData(f"not a decimal: {body[:40]!r}") from None
    if type(body) is not list:
        raise NotPlainData(f"{tag} body is not a list")
    if tag == "complex":
        return complex(float(body[0]), float(body[1]))
    if tag == "fraction":  # built here from two ints, by the fractions module itself
        if len(body) != 2 or type(body[0]) is not int or type(body[1]) is not int or body[1] == 0:
            raise NotPlainData("a fraction is not [numerator, nonzero denominator]")
        import fractions

        return fractions.Fraction(body[0], body[1])
    items = [decode(v) for v in body]
    if tag == "dict":
        return {k: v for k, v in (_pair(p) for p in items)}
    if tag == "odict":
        import collections

        return collections.OrderedDict(_pair(p) for p in items)
    return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)


def _pair(p):
    if type(p) is not list or len(p) != 2:
        raise NotPlainData("a dict item is not a [key, value] pair")
    return p[0], p[1]


# ---- the wire: JSON lines -------------------------------------------------------------------
# json.loads and json.dumps are _json's C scanner and encoder with json's default settings; the
# module json itself is not imported because it imports re and enum, 12 ms of a 50 ms start-up
# (bench/verify.py's programs/s). tests/integration/test_sandbox.py checks both against json on hostile text.


class _Defaults:  # what json.JSONDecoder() gives the C scanner
    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _json.make_scanner(_Defaults)
_SPACE = " \t\n\r"


def loads(data):
    """json.loads(data) for a UTF-8 line; ValueError (json.JSONDecodeError's base) when it is not one value."""
    text = data.decode("utf-8") if type(data) is bytes else data
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def _unencodable(x):
    raise TypeError(f"Object of type {type(x).__name__} is not JSON serializable")


def dumps(x):
    """json.dumps(x, separators=(",", ":")) as one line of bytes."""
    if type(x) is str:
        return _json.encode_basestring_ascii(x).encode() + b"\n"
    encode = _json.make_encoder({}, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True)
    return "".join(encode(x, 0)).encode() + b"\n"


# ---- role: exec (launcher of a plain program) -----------------------------------------------


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


# ---- role: serve (the solution's process) ----------------------------------------------------


def _solution_line(err):
    line, tb = 0, err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "solution.py":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _builtin_name(err):
    """The name of the nearest builtin exception class of err (a ValueError subclass -> 'ValueError'):
    what a test's `except` clause would catch in one process. The solution could name any builtin
    anyway (it may raise one), so reading its class's MRO gives it nothing new."""
    try:
        for cls in type(err).__mro__:
            if getattr(builtins, cls.__name__, None) is cls:
                return cls.__name__
    except BaseException:
        pass
    return type(err).__name__


def _describe(err):
    try:
        text = f"{type(err).__name__}: {err}".removesuffix(": ")
    except BaseException:
        text = type(err).__name__
    return " ".join(text.split())[:300]


# the state of builtin exceptions kept outside args and __dict__ (member slots): carried as data and
# set back through these builtins' own descriptors (`FileNotFoundError.filename`)
_MEMBERS = {"OSError": ("errno", "strerror", "filename", "filename2"), "ImportError": ("name", "path"), "NameError": ("name",)}


def _exception_data(err):
    """[classes, args, state] of the solution's exception: the [module, qualified name] of each class
    of its MRO up to Exception (the tests take the nearest one they can name: the prompt's
    `ValidationError` for the solution's subclass of it, `statistics.StatisticsError`), its exact
    arguments (`KeyError('b').args[0]`, a message with its newlines) and its state: its attributes
    (`__dict__`: the prompt's `InsufficientFunds(balance, amount)` keeps both and builds its message,
    `json.JSONDecodeError` its pos and doc) and a builtin's member slots (`_MEMBERS`: an OSError's
    filename), each as plain data; args or state None when they are not plain data."""
    try:
        classes = []
        for cls in type(err).__mro__[:32]:
            module, name = cls.__module__, cls.__qualname__
            if type(module) is str and type(name) is str:
                classes.append([module, name])
            if cls is Exception:
                break
    except BaseException:
        return []
    try:
        args = encode(list(err.args))
    except BaseException:
        args = None
    try:
        attrs = dict(vars(err))
        if not all(type(k) is str for k in attrs):
            raise NotPlainData("an attribute name is not a str")
        members = {}
        for base_name, fields in _MEMBERS.items():
            base = getattr(builtins, base_name)
            if isinstance(err, base):
                for field in fields:
                    try:
                        members[field] = encode(base.__dict__[field].__get__(err))
                    except BaseException:
                        pass  # not plain data (a path-like filename): left out
        state = [encode(attrs), members]
    except BaseException:
        state = None
    return [classes, args, state]


def run_serve(fd_in, fd_out):
    """Run the prompt's helpers (/tmp/prompt.py, when the problem has some) and solution.py, then
    answer requests until EOF. Everything here is the solution's to break: the harness trusts none
    of it and reads only data from it.

    The solution is a module named "solution", not "__main__": its `if __name__ == "__main__":`
    block does not run (HumanEval's own exec never runs it either; it may read stdin, which is
    empty here). A call's reply carries the arguments back when the call changed them (a list
    sorted in place), so the tests see what they would see in one process."""
    import types

    inp, out = os.fdopen(fd_in, "rb"), os.fdopen(fd_out, "wb")
    write, flush = out.write, out.flush
    module = types.ModuleType("solution")
    module.__file__ = "solution.py"
    sys.modules["solution"] = module  # dataclasses, pickle and typing look their module up
    ns = module.__dict__
    ns["__builtins__"] = builtins
    try:
        prompt = ""
        if os.path.exists("/tmp/prompt.py"):
            with open("/tmp/prompt.py") as f:
                prompt = f.read()
        # the prompt's code that names an entry point when it runs (`OPS = {"f": f}`) runs after the solution
        before, _, after = prompt.partition("\n" + AFTER_SOLUTION + "\n")
        with open("/tmp/solution.py") as f:
            solution = f.read()
        for source, name in ((before, "prompt.py"), (solution, "solution.py"), (after, "prompt.py")):
            if source:
                exec(compile(source, name, "exec"), ns)
        startup = None
    except BaseException as err:
        startup = ["raise", _builtin_name(err), _describe(err), _solution_line(err)]
    sys.stdout.flush()
    for line in inp:
        req = loads(line)
        if req[0] == "names":
            reply = startup or ["names", {n: _kind(ns[n]) for n in req[1] if n in ns}]
        elif startup:
            reply = startup
        else:
            try:
                args, kwargs = decode(req[2]), decode(req[3])
                value = ns[req[1]](*args, **kwargs)
                reply = ["ok", encode(value)]
                if req[4]:  # the harness's arguments held a list, dict or set: did the call change them?
                    after = encode([args, kwargs])
                    if after != [req[2], req[3]]:
                        reply.append(after)
            except BaseException as err:
                reply = ["raise", _builtin_name(err), _describe(err), _solution_line(err), *_exception_data(err)]
            sys.stdout.flush()
        try:
            data = dumps(reply)
        except (ValueError, RecursionError) as err:
            data = dumps(["raise", "NotPlainData", _describe(err), 0])
        write(data)
        flush()


def _kind(value):
    if type(value).__name__ == "module":
        return ["module", value.__name__]
    if callable(value):
        return ["function"]
    try:
        return ["value", encode(value)]
    except (NotPlainData, RecursionError) as err:
        return ["bad", _describe(err)]


# ---- role: tests (the trusted side) ---------------------------------------------------------


class SolutionError(Exception):
    """The solution's call raised an exception that is not a builtin one, or its process broke."""


class _Channel:
    def __init__(self, proc, out, inp):
        self.proc, self.out, self.inp, self.dead = proc, out, inp, None
        self.on_death = lambda status: None

    def ask(self, request):
        if self.dead:
            raise self._dead_error()
        try:
            self.out.write(dumps(request))
            self.out.flush()
            line = self.inp.readline(MAX_LINE + 1)
        except OSError:  # a broken pipe: the process is gone
            line = b""
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE:
                raise NotPlainData(f"the solution's answer is over {MAX_LINE >> 20} MiB")
            code = self.proc.wait()
            self.dead = f"signal {_signal_name(-code)}" if code < 0 else f"exit {code}"
            self.on_death(self.dead)
            raise self._dead_error()
        reply = decode_reply(line)
        if reply[0] == "raise":
            raise _remote_error(reply)
        return reply if request[0] == "call" else reply[1]

    def _dead_error(self):
        err = SolutionError(f"the solution's process ended ({self.dead})")
        err.rlvr_text, err.rlvr_line, err.rlvr_status = str(err), 0, self.dead
        return err


def decode_reply(line):
    try:
        reply = loads(line)
    except (ValueError, RecursionError) as err:
        raise NotPlainData(f"the solution's answer is not plain data ({type(err).__name__})") from None
    if type(reply) is not list or not reply or reply[0] not in ("ok", "raise", "names"):
        raise NotPlainData("the solution's answer is not a reply")
    if reply[0] == "raise":
        if len(reply) not in (4, 7) or not all(type(v) is str for v in reply[1:3]) or type(reply[3]) is not int:
            raise NotPlainData("the solution's error report is malformed")
        if len(reply) == 7 and not (
            type(reply[4]) is list and all(type(c) is list and len(c) == 2 and all(type(v) is str for v in c) for c in reply[4])
        ):
            raise NotPlainData("the solution's error report is malformed")
        return reply
    if len(reply) != 2 and not (reply[0] == "ok" and len(reply) == 3):
        raise NotPlainData("the solution's answer is malformed")
    if reply[0] == "ok":
        try:
            changed = [decode(reply[2])] if len(reply) == 3 else []
            if changed and not (type(changed[0]) is list and len(changed[0]) == 2 and type(changed[0][1]) is dict):
                raise NotPlainData("the solution's changed arguments are malformed")
            return ["ok", decode(reply[1]), *changed]
        except RecursionError:
            raise NotPlainData("the solution's answer is nested too deep") from None
        except TypeError as err:  # an unhashable set item or dict key
            raise NotPlainData(f"the solution's answer is not plain data ({err})") from None
    return reply


# a test runner's own exceptions (unittest.SkipTest: a skip is no failure) never arrive as themselves
_TEST_RUNNERS = frozenset({"unittest", "doctest", "pytest", "_pytest"})
_TESTS = {}  # the tests' namespace, where the prompt's own exception classes live (run_tests)


def _same_class(classes, args, state):
    """The solution's exception as the nearest class of its MRO that the tests can name without the
    solution: one the prompt's code defines (module "solution" there, the tests' namespace here; the
    solution's own subclass of it arrives as it) or one of a module the tests' process has already
    imported (`statistics.StatisticsError`, or it for the solution's subclass of it); or its nearest
    builtin class. Rebuilt as it was, from data, with no constructor of the prompt's or a module's
    run: `cls.__new__` of its builtin base, then its args, attributes and member slots set as they
    crossed (an `__init__(self, balance, amount)` that builds its message, `HTTPError(message,
    status=500)` with its status, `json.JSONDecodeError`); a builtin class by its own constructor
    from its args (UnicodeDecodeError's fields), then the same state. None when args or state are
    not plain data, or no class of its MRO is found (an Exception subclass only, StopIteration aside)."""
    try:
        if args is None or state is None:
            return None
        values = decode(args)
        attrs, members = decode(state[0]), state[1]
        if type(values) is not list or type(attrs) is not dict or type(members) is not dict:
            return None
        if not all(type(k) is str for k in attrs):
            return None
        for module, qualname in classes:
            if module == "solution" and "." not in qualname:
                cls = _TESTS.get(qualname)
            elif module in sys.modules and module != "__main__" and module.split(".")[0] not in _TEST_RUNNERS:
                cls = sys.modules[module]
                for part in qualname.split("."):
                    cls = getattr(cls, part, None)
            else:
                continue
            if cls is None:
                continue
            if not (isinstance(cls, type) and issubclass(cls, Exception)) or issubclass(cls, (StopIteration, StopAsyncIteration)):
                return None
            if cls.__module__ == "builtins" and cls.__name__ not in SAFE_ERRORS:
                return None
            try:
                err = _rebuilt(cls, values, attrs, members)
            except Exception:
                continue
            if err is not None:
                return err
        return None
    except Exception:
        return None


def _rebuilt(cls, values, attrs, members):
    """An instance of cls holding these args, attributes and member slots (see _same_class)."""
    if cls.__module__ == "builtins":
        err = cls(*values)
    else:
        base = next(c for c in cls.__mro__ if c.__module__ == "builtins")
        err = base.__new__(cls, *values)
    if not isinstance(err, cls):
        return None
    err.args = tuple(values)
    vars(err).update(attrs)
    for base_name, fields in _MEMBERS.items():
        base = getattr(builtins, base_name)
        if isinstance(err, base):
            for field in fields:
                if field in members:
                    try:
                        base.__dict__[field].__set__(err, decode(members[field]))
                    except Exception:
                        pass
    return err


def _remote_error(reply):
    """The solution's error as the test sees it: its builtin class (the nearest one the solution side
    found) rebuilt from the message; a class whose constructor needs more (UnicodeDecodeError,
    ExceptionGroup) as its nearest base that takes one, never the TypeError its constructor raised;
    StopIteration as RuntimeError (SAFE_ERRORS); anything else as SolutionError."""
    _, name, text, line = reply[:4]
    message = text.partition(": ")[2] or text
    err = _same_class(*reply[4:]) if len(reply) == 7 else None
    if err is None and name in SAFE_ERRORS:
        for cls in getattr(builtins, name).__mro__:
            if cls.__name__ in SAFE_ERRORS:
                try:
                    err = cls(message)
                    break
                except Exception:
                    continue
    elif name in ("StopIteration", "StopAsyncIteration"):
        err = RuntimeError(f"the solution raised {name} (PEP 479: it would end the caller's loop)")
    if err is None:
        err = SolutionError(text)
    err.rlvr_text, err.rlvr_line = text, line
    return err


def _signal_name(number):
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class Remote:
    """A function of the solution, seen from the harness: arguments and result cross as data, and
    arguments the call changed in place are changed here the same way (`update_in_place`). Its
    `__name__` and `__qualname__` are the name it is asked by (the entry point's: a solution's
    `square = _sq` is `square` here); its other attributes (`__doc__`, `__module__`) are not the
    solution's function's."""

    __slots__ = ("_channel", "_name")

    def __init__(self, name, channel):
        self._name, self._channel = name, channel

    def __call__(self, *args, **kwargs):
        sent = [encode(list(args)), encode(kwargs)]
        mutable = any(_holds_mutable(v) for v in sent[0]) or any(_holds_mutable(v) for _, v in sent[1]["dict"])
        reply = self._channel.ask(["call", self._name, *sent, mutable])
        if mutable and len(reply) == 3:
            new_args, new_kwargs = reply[2]
            update_in_place(list(args), new_args)
            update_in_place(kwargs, new_kwargs)
        return reply[1]

    def __getattr__(self, attr):  # a function's name, as the tests and the prompt's code read it (`OPS = {f.__name__: f ...}`)
        if attr in ("__name__", "__qualname__"):
            return self._name
        raise AttributeError(f"'function' object has no attribute {attr!r}")

    def __repr__(self):
        return f"<solution's {self._name}>"


def _holds_mutable(encoded):
    """Does encoded data hold a list, dict or set (something a call could change in place)?"""
    if type(encoded) is list:
        return True
    if type(encoded) is dict:
        ((tag, body),) = encoded.items()
        return tag in ("dict", "set") or tag in ("tuple", "frozenset") and any(_holds_mutable(v) for v in body)
    return False


def update_in_place(old, new):
    """Make `old` (the harness's own argument) equal `new` (the same argument after the call, as
    fresh builtins), changing lists, dicts and sets in place so that every name for them sees it.

    >>> a = [[3, 1], {"k": {2}}]; inner = a[0]; update_in_place(a, [[1, 3], {"k": {2, 5}}]); (a, inner)
    ([[1, 3], {'k': {2, 5}}], [1, 3])
    """
    if type(old) is list and type(new) is list:  # item by item: an item moved elsewhere is a copy there
        for i in range(min(len(old), len(new))):
            if _same_shape(old[i], new[i]):
                update_in_place(old[i], new[i])
            else:
                old[i] = new[i]
        del old[len(new) :]
        old.extend(new[len(old) :])
    elif type(old) is dict and type(new) is dict:
        for k in [k for k in old if k not in new]:
            del old[k]
        for k, n in new.items():
            if k in old and _same_shape(old[k], n):
                update_in_place(old[k], n)
            else:
                old[k] = n
    elif type(old) is set and type(new) is set:
        old.clear()
        old.update(new)
    elif type(old) is tuple and type(new) is tuple and len(old) == len(new):
        for o, n in zip(old, new):
            if _same_shape(o, n):
                update_in_place(o, n)


def _same_shape(old, new):
    return type(old) is type(new) and type(old) in (list, dict, set, tuple)


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
        text = getattr(outcome, "rlvr_text", None) or _describe(outcome)
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
    """The solution's process as _Channel sees it: wait() -> exit code, -N for signal N (as Popen)."""

    def __init__(self, pid):
        self.pid = pid

    def wait(self):
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def _fork_solution(cpu, mem, fsize, nproc, uid):
    """The solution's process: a fork of this one, made before the secret is read (its memory holds
    nothing the solution may not see: this module, the standard library, the limits), with every fd
    but its two pipes closed (the secret memfd and the report pipe among them), stdin /dev/null, its
    own rlimits and uid; then harness.py's `serve` role, as if started as its own process (no second
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
            sys.argv[:] = [__file__, "serve", str(to_sol_r), str(from_sol_w)]
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
    return _Channel(_Child(pid), os.fdopen(to_sol_w, "wb"), os.fdopen(from_sol_r, "rb"))


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
        raise SystemExit("harness.py: prctl(PR_SET_DUMPABLE, 0) failed")


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
    global _TESTS
    _TESTS = ns
    try:
        known = channel.ask(["names", head["names"]])
    except (Exception, NotPlainData) as err:
        known = {n: ["function"] for n in head["names"]}
        status = getattr(err, "rlvr_status", None) or getattr(err, "rlvr_text", None) or _describe(err)
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


def main(argv):
    if argv[0] == "exec":
        run_exec(argv[1:])
    elif argv[0] == "serve":
        run_serve(int(argv[1]), int(argv[2]))
    elif argv[0] == "tests":
        run_tests(argv[1:])
    else:
        raise SystemExit(f"harness.py: unknown role {argv[0]!r}")


if __name__ == "__main__":
    sys.set_int_max_str_digits(0)  # huge integers are data too (the answer of a factorial task)
    main(sys.argv[1:])
