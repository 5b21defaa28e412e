"""Running the SQL macros' test tables (tests/unit/verify/sql/): one case per row of {macro: [(id, args, want)]},
each macro called on its own through rlvr.verify.scoring.connect, its arguments bound as $a0, $a1, ..."""

from __future__ import annotations

import pytest

from rlvr.verify.scoring import connect


def macro_cases(tables: dict[str, list[tuple]]) -> list:
    """One pytest case (macro, args, want) per table row, named macro-id; a single argument may stand alone."""
    return [
        pytest.param(macro, args if isinstance(args, tuple) else (args,), want, id=f"{macro}-{name}")
        for macro, rows in tables.items()
        for name, args, want in rows
    ]


def call_macro(macro: str, args: tuple, calls: dict[str, str] | None = None) -> object:
    """The macro's value on args; calls names the expression for a macro that is a pattern, not a function
    ('regexp_matches($a0, sign_off())')."""
    sql = (calls or {}).get(macro) or f"{macro}({', '.join(f'$a{i}' for i in range(len(args)))})"
    return connect().execute(f"SELECT {sql}", {f"a{i}": a for i, a in enumerate(args)}).fetchone()[0]
