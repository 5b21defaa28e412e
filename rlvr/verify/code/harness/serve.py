"""The harness's `serve` role: the solution's process. It runs the prompt's helpers and the
solution as the module "solution", then answers the calls the tests' process sends (runner.py,
through proxy.py) with plain data (wire.py): a result, the arguments a call changed in place, or
the solution's exception as its classes, args and state. Everything here is the solution's to
break; the tests' process trusts none of it and reads only data from it. Runs inside the sandbox,
standard library only.

Test: tests/integration/test_sandbox.py, tests/integration/test_code_trust.py.
"""

import builtins
import os
import sys

from .wire import MEMBERS, NotPlainData, decode, dumps, encode, loads

AFTER_SOLUTION = "# rlvr: the prompt's code that needs the solution, run after it"  # rlvr.verify.code.prompt's


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


def describe(err):
    try:
        text = f"{type(err).__name__}: {err}".removesuffix(": ")
    except BaseException:
        text = type(err).__name__
    return " ".join(text.split())[:300]


# the state of builtin exceptions kept outside args and __dict__ (member slots): carried as data and
# set back through these builtins' own descriptors (`FileNotFoundError.filename`)
def _exception_data(err):
    """[classes, args, state] of the solution's exception: the [module, qualified name] of each class
    of its MRO up to Exception (the tests take the nearest one they can name: the prompt's
    `ValidationError` for the solution's subclass of it, `statistics.StatisticsError`), its exact
    arguments (`KeyError('b').args[0]`, a message with its newlines) and its state: its attributes
    (`__dict__`: the prompt's `InsufficientFunds(balance, amount)` keeps both and builds its message,
    `json.JSONDecodeError` its pos and doc) and a builtin's member slots (`MEMBERS`: an OSError's
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
        for base_name, fields in MEMBERS.items():
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
        startup = ["raise", _builtin_name(err), describe(err), _solution_line(err)]
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
                reply = ["raise", _builtin_name(err), describe(err), _solution_line(err), *_exception_data(err)]
            sys.stdout.flush()
        try:
            data = dumps(reply)
        except (ValueError, RecursionError) as err:
            data = dumps(["raise", "NotPlainData", describe(err), 0])
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
        return ["bad", describe(err)]
