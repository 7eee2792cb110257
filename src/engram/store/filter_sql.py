"""A ``MemoryFilter`` as a SQL WHERE clause, for SQLite and for PostgreSQL.

``MemoryFilter.matches`` is the reference. The clause is built here once, in one order, so the
two stores cannot come to filter differently; a ``FilterDialect`` gives the few pieces each
database writes its own way: the placeholder, false, "one of these values" (SQLite's ``IN``
list, PostgreSQL's ``= ANY`` array), "holds these tags" (a JSON array searched with
``json_each``, a ``text[]`` compared with ``@>``), a text case-folded (``engram.where.fold_case``:
SQLite's registered function, PostgreSQL's ``engram_casefold``; the related entity is compared
folded, the stored value left as written) and the metadata condition (``where_sql``).
The time part is ``temporal.sql``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engram.model import MemoryFilter
from engram.store.sql_store import scope_columns
from engram.temporal.sql import time_clauses
from engram.where import Condition, fold_case


@dataclass(frozen=True)
class FilterDialect:
    mark: str  # the driver's placeholder
    false: str  # the clause of a filter with no scope: it matches nothing
    # ``{column}`` is one of ``values``: its SQL; appends its parameters.
    one_of: Callable[[str, list[str], list[Any]], str]
    # ``{alias}.tags`` holds every one of the (non-empty) ``tags``: its clauses; appends their parameters.
    has_tags: Callable[[str, Sequence[str], list[Any]], list[str]]
    # The metadata condition on ``{alias}.metadata``: its SQL; appends its parameters.
    where: Callable[[Condition, str, list[Any]], str]
    # A text expression's SQL case-folded as ``engram.where.fold_case`` folds it (the database's own
    # lower() folds A-Z only, or by its build and collation).
    fold_case: Callable[[str], str]
    # ``({alias}.agent, {alias}.session)`` is one of these pairs, for a filter of more than
    # ``MANY_SCOPES`` scopes: its SQL; appends its parameters. None: every scope its own OR term.
    scope_among: Callable[[str, list[tuple[str, str]], list[Any]], str] | None = None


# Past this many scopes (an operator's read of every agent's: the mem0 facade's lookup by mem0 id
# names each owner), a dialect with ``scope_among`` writes the scopes as one list: SQLite plans an OR
# of a hundred scopes again at every run (its STAT4 statistics make a bound value re-plan the
# statement), about 6 ms of planning for a lookup that reads one row. A view's own scopes (its
# session, its agent, global) stay OR terms, as every plan was measured with.
MANY_SCOPES = 8


def filter_clause(filt: MemoryFilter, alias: str, dialect: FilterDialect) -> tuple[str, list[Any]]:
    """The WHERE clause for ``filt`` over the memories aliased ``alias``, and its parameters."""
    mark = dialect.mark
    clauses: list[str] = []
    params: list[Any] = []
    if dialect.scope_among is not None and len(filt.scopes) > MANY_SCOPES:
        clauses.append(dialect.scope_among(alias, [scope_columns(scope) for scope in filt.scopes], params))
    else:
        scope_parts = []
        for scope in filt.scopes:
            scope_parts.append(f"({alias}.agent = {mark} AND {alias}.session = {mark})")
            params.extend(scope_columns(scope))
        clauses.append("(" + " OR ".join(scope_parts) + ")" if scope_parts else dialect.false)
    for column, values in (("category", filt.categories), ("type", filt.types), ("layer", filt.layers)):
        if values:
            clauses.append(dialect.one_of(f"{alias}.{column}", [str(v) for v in values], params))
    if filt.tags:
        clauses.extend(dialect.has_tags(alias, filt.tags, params))
    if filt.related_entity is not None:  # a name, whatever its case: folded on both sides
        clauses.append(f"{dialect.fold_case(f'{alias}.related_entity')} = {mark}")
        params.append(fold_case(filt.related_entity))
    for column, value in (("key", filt.key), ("superseded_by", filt.superseded_by)):  # identifiers: exactly
        if value is not None:
            clauses.append(f"{alias}.{column} = {mark}")
            params.append(value)
    if filt.where is not None:
        clauses.append(dialect.where(filt.where, alias, params))
    for op, bound in ((">=", filt.since), ("<=", filt.until)):
        if bound is not None:
            clauses.append(f"{alias}.created_at {op} {mark}")
            params.append(bound)
    more, more_params = time_clauses(filt, alias, mark)
    clauses.extend(more)
    params.extend(more_params)
    return " AND ".join(clauses), params
