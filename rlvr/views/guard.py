"""`rlvr sql`'s statement classifier: which SQL it runs at all (layer 1 of rlvr/views/sql.py).

`check_query(sql)` accepts one plain SELECT / WITH / VALUES / DESCRIBE / SUMMARIZE / SHOW, judged
by DuckDB's own parser (statement type, then the statement's syntax tree from json_serialize_sql),
and raises QueryError naming anything else: other statements (EXPLAIN ANALYZE included), file-
reading or catalogue table functions (read_text, read_parquet, glob, query, duckdb_settings, ...)
and FROM 'file' scans. It imports only duckdb, so that the CLI refuses before loading pyarrow.

Tests: tests/unit/views/test_sql_readonly.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import duckdb

from rlvr.errors import RlvrError

VIEWS = (
    "problems",
    "rollouts",
    "scores",
    "updates",
    "evals",
    "scorings",
    "reward_components",
)  # TABLES + rlvr.views.sql's views (a test keeps them equal)
ACCEPTED = "one SELECT, WITH, VALUES, DESCRIBE, SUMMARIZE or SHOW statement"
# Table functions that compute rows and read nothing; every other one (read_*, glob, query,
# parquet_metadata, duckdb_settings, ...) reads files or the engine's state and is refused.
PURE_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest", "json_each", "json_tree"})
# Scalar functions that reveal the engine's configuration or environment.
REFUSED_FUNCTIONS = frozenset({"current_setting", "getenv", "getvariable"})


class QueryError(RlvrError, ValueError):
    pass


# ---- layer 1: the statement classifier ----------------------------------------------------------

_parser: duckdb.DuckDBPyConnection | None = None


def _parser_connection() -> duckdb.DuckDBPyConnection:
    """An empty connection used only to parse (json_serialize_sql executes nothing)."""
    global _parser
    if _parser is None:
        _parser = duckdb.connect(config={"enable_external_access": False})
    return _parser


def _statement_name(sql: str) -> str:
    """The statement's leading keywords ('INSTALL', 'FORCE INSTALL', 'EXPLAIN ANALYZE COPY'), from
    DuckDB's tokenizer: DuckDB files INSTALL under LOAD, so its statement type would misname it."""
    words = []
    tokens = duckdb.tokenize(sql)
    ends = [pos for pos, _ in tokens[1:]] + [len(sql)] if tokens else []
    for (pos, kind), end in zip(tokens, ends, strict=True):
        if kind == duckdb.token_type.comment:
            continue
        words.append(sql[pos:end].strip().upper())
        if words[0] not in ("EXPLAIN", "FORCE") or words[-1] not in ("EXPLAIN", "ANALYZE", "FORCE") or len(words) == 3:
            break
    return " ".join(words) or "an empty statement"


def _nodes(tree: object) -> Iterator[dict]:
    """Every dict in a json_serialize_sql tree (depth first)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _looks_like_a_file(name: str) -> bool:
    return any(c in name for c in "./\\*?:~")


def check_query(query: str) -> None:
    """Raise QueryError unless `query` is one plain read-only statement that reads only the views."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as err:
        raise QueryError(f"SQL does not parse: {str(err).splitlines()[0]}") from None
    if len(statements) != 1:
        names = ", ".join(_statement_name(s.query) for s in statements)
        raise QueryError(f"give exactly {ACCEPTED}; got {len(statements)} statements ({names})")
    stmt = statements[0]
    if stmt.type != duckdb.StatementType.SELECT:
        raise QueryError(f"{_statement_name(stmt.query)} is refused: `rlvr sql` is read-only and runs {ACCEPTED}")
    tree = json.loads(_parser_connection().execute("SELECT json_serialize_sql($q)", {"q": query}).fetchone()[0])
    if tree.get("error"):  # a SELECT the serializer cannot express: refuse rather than guess
        raise QueryError(f"query refused: {tree.get('error_message', 'it cannot be analysed')}")
    for node in _nodes(tree):
        kind = node.get("type")
        if kind == "TABLE_FUNCTION":
            name = node["function"]["function_name"].lower()
            if name not in PURE_TABLE_FUNCTIONS:
                raise QueryError(
                    f"table function {name}() is refused: `rlvr sql` reads the run through its views "
                    f"({', '.join(VIEWS)}), which hold exactly the committed shards"
                )
        elif kind in ("BASE_TABLE", "SHOW_REF") and _looks_like_a_file(node.get("table_name", "")):
            raise QueryError(f"FROM '{node['table_name']}' reads a file and is refused: query the views ({', '.join(VIEWS)})")
        elif node.get("class") == "FUNCTION" and node.get("function_name", "").lower() in REFUSED_FUNCTIONS:
            raise QueryError(f"{node['function_name']}() is refused: it reads the engine's configuration")
