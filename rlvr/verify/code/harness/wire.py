"""The harness's wire: plain data as JSON lines between the tests' process and the solution's.

`encode` turns a value into JSON-ready data (tags for tuple, set, frozenset, dict, OrderedDict,
bytes, complex, Fraction and Decimal; a builtin's subclass as the builtin value it holds) and
`decode` builds fresh builtins from it, refusing anything else with NotPlainData; `loads` and
`dumps` are json's own C scanner and encoder without the json module. Runs inside the sandbox
(standard library only) and is imported by the host's tests.

Test: tests/integration/test_sandbox.py (the wire against json on hostile text),
tests/integration/test_code_trust.py (exact numbers), the doctests (tests/unit/verify/test_doctests.py).
"""

import _json  # json's own C scanner and encoder; see loads/dumps
import sys

# tags of the non-JSON builtins; every JSON object on the wire is exactly one of these
_TAGS = ("tuple", "set", "frozenset", "dict", "odict", "bytes", "complex", "fraction", "decimal")
MAX_LINE = 64 << 20  # one message; a solution returning more fails that call
# the state of builtin exceptions kept outside args and __dict__ (member slots): carried as data and
# set back through these builtins' own descriptors (`FileNotFoundError.filename`)
MEMBERS = {"OSError": ("errno", "strerror", "filename", "filename2"), "ImportError": ("name", "path"), "NameError": ("name",)}


class NotPlainData(BaseException):
    """A value that cannot cross the process boundary (not one of the JSON-like builtins). Not an
    Exception (nor a TypeError): a test's `except TypeError:` or `except Exception:`
    must not take the harness's refusal for an error the solution raised (else a
    solution returning `object()` would pass every test that expects a TypeError)."""


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
    wire.NotPlainData: unknown tag ['evil']
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
