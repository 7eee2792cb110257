"""A ``MemoryFilter`` as a SQL WHERE clause, for SQLite and for PostgreSQL.

``MemoryFilter.matches`` is the reference. The clause is built here once, in one order, so the
two stores cannot come to filter differently; a ``FilterDialect`` gives the few pieces each
database writes its own way: the placeholder, false, "one of these values" (SQLite's ``IN``
list, PostgreSQL's ``= ANY`` array), "holds these tags" (a JSON array searched with
``json_each``, a ``text[]`` compared with ``@>``) and the metadata condition (``where_sql``).
The time part is ``temporal.sql``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engram.model import MemoryFilter
from engram.store.sql_store import scope_columns
from engram.temporal.sql import time_clauses
from engram.where import Condition


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


def filter_clause(filt: MemoryFilter, alias: str, dialect: FilterDialect) -> tuple[str, list[Any]]:
    """The WHERE clause for ``filt`` over the memories aliased ``alias``, and its parameters."""
    mark = dialect.mark
    clauses: list[str] = []
    params: list[Any] = []
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
    for column, value in (("related_entity", filt.related_entity), ("key", filt.key), ("superseded_by", filt.superseded_by)):
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
