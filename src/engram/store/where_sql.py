"""A metadata condition (``engram.where``) as SQL, for SQLite and for PostgreSQL.

``Condition.matches`` is the reference; each test here computes the same answer in the database,
so a filtered list or recall reads only the rows that match. Every test yields true or false,
never NULL (a missing key is false), so ``NOT`` is the reference's "none of them" on every row.
Types are checked before a value is read as one (``CASE``: PostgreSQL does not promise the order
in which ``AND`` evaluates, and ``'abc'::float8`` would fail the query). Numbers compare as
doubles and strings by code point (UTF-8 bytes: SQLite's BINARY, PostgreSQL's "C" collation), as
the reference does.

An equality with a string (``eq``, ``in``) tests the value read down a path written into the SQL
as literals (``sqlite_value_at``, ``postgres_text_at``), not passed as a parameter, and as a term of its
own: an expression index on that path (``memories_mem0_id``, schema steps 0015 and 0020, for the
mem0 facade's lookup by mem0 id) is then one the planner can match and seek through, where a path
bound as a parameter is a different expression to it and every row's JSON is read.
"""

from __future__ import annotations

import json
from typing import Any

from engram.where import RANGES, Compare, Condition, fold_case, is_json_number, json_text

_SQL_OP = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
# SQLite's registered functions (``SqliteMemoryStore`` registers them on its connection).
SQLITE_METADATA_TEXT = "engram_metadata_text"  # the stored value's canonical JSON text
SQLITE_FOLD_CASE = "engram_fold_case"  # fold_case; built-in lower() is A-Z only, or ICU's


def sqlite_fold_case(sql: str) -> str:
    """``sql`` (a text expression) case-folded in SQLite as ``engram.where.fold_case`` folds it."""
    return f"{SQLITE_FOLD_CASE}({sql})"


def postgres_fold_case(sql: str) -> str:
    """``sql`` (a text expression) case-folded in PostgreSQL as ``engram.where.fold_case`` folds it:
    ``engram_casefold`` (schema steps 0017 and 0018) holds str.casefold's table."""
    return f"engram_casefold({sql})"


def _logic(op: str, parts: list[str]) -> str:
    if op == "and":
        return "(" + " AND ".join(parts) + ")"
    joined = "(" + " OR ".join(parts) + ")"
    return joined if op == "or" else f"(NOT {joined})"


def sqlite_path(keys: tuple[str, ...] | list[str]) -> str:
    """The JSON path of ``keys``, each quoted as ``json.dumps`` quotes it (so no raw control character)."""
    return "$" + "".join("." + json.dumps(key) for key in keys)


def sqlite_value_at(doc: str, keys: tuple[str, ...] | list[str]) -> str:
    """The value of ``doc`` (JSON text) at ``keys``, read with the path as a SQL literal, as an
    expression index on it is written (``json_extract``: NULL where a key is missing)."""
    return f"json_extract({doc}, '{sqlite_path(keys).replace(chr(39), chr(39) * 2)}')"


def postgres_text_at(doc: str, keys: tuple[str, ...] | list[str]) -> str:
    """The text of ``doc`` (JSONB) at ``keys`` (``->`` object by object, ``->>`` the last: NULL where
    one is missing or is no object, as the reference reads a path), each key a literal, as an
    expression index on it is written. An escape string (``E'...'``) reads the same whatever
    ``standard_conforming_strings`` says; ``%`` is doubled, the statement being formatted with
    ``%s`` parameters."""
    def literal(key: str) -> str:
        return "E'" + key.replace("\\", "\\\\").replace("'", "''").replace("%", "%%") + "'"

    steps = [f" -> {literal(key)}" for key in keys[:-1]] + [f" ->> {literal(keys[-1])}"]
    return f"({doc}{''.join(steps)})"


def sqlite_where(cond: Condition, alias: str, params: list[Any]) -> str:
    """SQLite SQL for ``cond`` on ``{alias}.metadata`` (JSON text); appends its parameters."""
    if not isinstance(cond, Compare):
        return _logic(cond.op, [sqlite_where(part, alias, params) for part in cond.parts])
    doc, path = f"{alias}.metadata", sqlite_path(cond.keys)
    kind, value = f"json_type({doc}, ?)", f"json_extract({doc}, ?)"
    if cond.op == "exists":
        params.append(path)
        return f"({kind} IS NOT NULL)"
    if cond.op in ("eq", "in"):
        values = cond.value if cond.op == "in" else (cond.value,)
        texts = [v for v in values if isinstance(v, str)]
        tests = []
        if texts:
            # Never NULL: a missing value makes the type test 0, and NULL AND 0 is 0. The texts in one
            # IN, not one = each: SQLite before 3.45 parses the row's JSON for every json_extract, so
            # ``importers.apply._kept_as``'s 400 texts parsed each row 400 times (6 s for 5,000 on 5,000).
            test = "= ?" if len(texts) == 1 else f"IN ({', '.join('?' * len(texts))})"
            tests.append(f"({sqlite_value_at(doc, cond.keys)} {test} AND COALESCE({kind} = 'text', 0))")
            params.extend([*texts, path])
        for v in values:
            if not isinstance(v, str):
                tests.append(f"COALESCE({kind} <> 'text' AND {SQLITE_METADATA_TEXT}({doc}, ?) = ?, 0)")
                params.extend([path, json.dumps(cond.keys), json_text(v)])
        return "(" + (" OR ".join(tests) or "0") + ")"
    if cond.op in RANGES:
        if is_json_number(cond.value):
            params.extend([path, path, float(cond.value)])
            return (f"(CASE WHEN {kind} IN ('integer', 'real') THEN CAST({value} AS REAL) {_SQL_OP[cond.op]} ? "
                    "ELSE 0 END)")
        params.extend([path, path, cond.value])
        return f"(CASE WHEN {kind} = 'text' THEN {value} {_SQL_OP[cond.op]} ? ELSE 0 END)"
    fold = sqlite_fold_case if cond.op == "icontains" else (lambda sql: sql)
    needle = fold_case(cond.value) if cond.op == "icontains" else cond.value
    params.extend([path, path, needle, path, needle])
    return (f"(CASE {kind} WHEN 'text' THEN instr({fold(value)}, ?) > 0"
            f" WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each({doc}, ?) AS e"
            f" WHERE e.type = 'text' AND {fold('e.value')} = ?) ELSE 0 END)")


def postgres_where(cond: Condition, alias: str, params: list[Any]) -> str:
    """PostgreSQL SQL for ``cond`` on ``{alias}.metadata`` (a JSON column); appends its parameters."""
    if not isinstance(cond, Compare):
        return _logic(cond.op, [postgres_where(part, alias, params) for part in cond.parts])
    doc = f"{alias}.metadata::jsonb"
    # By path (``Compare.within``): ``#>`` is ``->`` key by key, NULL where a key is missing.
    node, text, kind = f"({doc} #> %s::text[])", f"({doc} #>> %s::text[])", f"jsonb_typeof({doc} #> %s::text[])"
    keys = list(cond.keys)
    if cond.op == "exists":
        params.append(keys)
        return f"({node} IS NOT NULL)"  # a JSON null is a value: #> gives 'null'::jsonb, not NULL
    if cond.op in ("eq", "in"):
        values = cond.value if cond.op == "in" else (cond.value,)
        tests = []
        for v in values:
            if isinstance(v, str):
                # Never NULL: a missing value makes the type test FALSE, and NULL AND FALSE is FALSE.
                tests.append(f"({postgres_text_at(doc, keys)} = %s AND COALESCE({kind} = 'string', FALSE))")
                params.extend([v, keys])
            else:  # by the JSON text of both sides as JSONB prints it (the reference's canonical text)
                tests.append(f"COALESCE({kind} <> 'string' AND {node}::text = (%s::jsonb)::text, FALSE)")
                params.extend([keys, keys, json_text(v)])
        return "(" + (" OR ".join(tests) or "FALSE") + ")"
    if cond.op in RANGES:
        if is_json_number(cond.value):
            params.extend([keys, keys, float(cond.value)])
            return (f"(CASE WHEN {kind} = 'number' THEN {text}::float8 {_SQL_OP[cond.op]} %s::float8"
                    " ELSE FALSE END)")
        params.extend([keys, keys, cond.value])
        return f"(CASE WHEN {kind} = 'string' THEN {text} COLLATE \"C\" {_SQL_OP[cond.op]} %s::text ELSE FALSE END)"
    if cond.op == "contains":
        params.extend([keys, keys, cond.value, keys, cond.value])
        return (f"(CASE {kind} WHEN 'string' THEN strpos({text}, %s::text) > 0"
                f" WHEN 'array' THEN {node} @> jsonb_build_array(%s::text) ELSE FALSE END)")
    needle, element = fold_case(cond.value), "e.v #>> '{}'"
    params.extend([keys, keys, needle, keys, needle])
    return (f"(CASE {kind} WHEN 'string' THEN strpos({postgres_fold_case(text)}, %s::text) > 0"
            f" WHEN 'array' THEN EXISTS (SELECT 1 FROM jsonb_array_elements({node}) AS e(v)"
            f" WHERE jsonb_typeof(e.v) = 'string' AND {postgres_fold_case(element)} = %s::text)"
            " ELSE FALSE END)")
