"""The solution as the tests' process sees it: `Remote`, a proxy for each of its functions, whose
calls cross to the solution's process (serve.py) over a `Channel` as plain data (wire.py); the
result comes back as fresh builtins, arguments the call changed in place are changed here the
same way (`update_in_place`), and the solution's exception is rebuilt as the nearest class the
tests can name without the solution (`_remote_error`). Nothing the solution sends is trusted
beyond its data (`decode_reply`). Runs inside the sandbox, standard library only.

Test: tests/integration/test_sandbox.py, tests/integration/test_code_trust.py,
tests/integration/test_redteam.py.
"""

import builtins
import sys

from .wire import MAX_LINE, MEMBERS, NotPlainData, decode, dumps, encode, loads

# exceptions a solution's call may raise in the harness as themselves (a test may expect one);
# StopIteration and StopAsyncIteration arrive as RuntimeError (PEP 479: out of a call, they would end
# the test's own loop, `all(map(candidate, ...))`, as if it had passed)
SAFE_ERRORS = frozenset(
    n
    for n, v in vars(builtins).items()
    if isinstance(v, type) and issubclass(v, Exception) and not issubclass(v, (StopIteration, StopAsyncIteration))
)


class SolutionError(Exception):
    """The solution's call raised an exception that is not a builtin one, or its process broke."""


class Channel:
    def __init__(self, proc, out, inp):
        self.proc, self.out, self.inp, self.dead = proc, out, inp, None
        self.on_death = lambda status: None
        self.tests = {}  # the tests' namespace, where the prompt's own exception classes live (runner.run_tests)

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
            raise _remote_error(reply, self.tests)
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


def _nameable(module):
    """Whether the tests may take an exception class from this loaded module: not the tests' own
    (`__main__`), nor a test runner's, nor the harness's own package (its modules are loaded in both
    processes, so a solution could name one of its classes)."""
    if module == "__main__" or module.split(".")[0] in _TEST_RUNNERS:
        return False
    return module != __package__ and not module.startswith(__package__ + ".")


def _same_class(tests, classes, args, state):
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
                cls = tests.get(qualname)
            elif module in sys.modules and _nameable(module):
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
    for base_name, fields in MEMBERS.items():
        base = getattr(builtins, base_name)
        if isinstance(err, base):
            for field in fields:
                if field in members:
                    try:
                        base.__dict__[field].__set__(err, decode(members[field]))
                    except Exception:
                        pass
    return err


def _remote_error(reply, tests):
    """The solution's error as the test sees it: its builtin class (the nearest one the solution side
    found) rebuilt from the message; a class whose constructor needs more (UnicodeDecodeError,
    ExceptionGroup) as its nearest base that takes one, never the TypeError its constructor raised;
    StopIteration as RuntimeError (SAFE_ERRORS); anything else as SolutionError."""
    _, name, text, line = reply[:4]
    message = text.partition(": ")[2] or text
    err = _same_class(tests, *reply[4:]) if len(reply) == 7 else None
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
