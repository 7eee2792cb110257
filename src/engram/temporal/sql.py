"""The time part of a ``MemoryFilter`` as SQL, shared by the SQLite and PostgreSQL stores.

``MemoryFilter._matches_time`` is the reference; this is its translation, written once so the
two dialects (which differ only in their placeholder) cannot drift apart. It also owns the
superseded rule, because "as of" and "as known at" change which superseded memories count.
"""

from __future__ import annotations

from typing import Any

from engram.model import MemoryFilter


def time_clauses(filt: MemoryFilter, alias: str, mark: str) -> tuple[list[str], list[Any]]:
    """WHERE clauses (AND-ed by the caller) and their parameters; ``mark`` is ``?`` or ``%s``."""
    m = alias
    clauses: list[str] = []
    params: list[Any] = []
    event = f"COALESCE({m}.valid_from, {m}.created_at)"
    if filt.happened_from is not None:
        clauses.append(f"{event} >= {mark}")
        params.append(filt.happened_from)
    if filt.happened_before is not None:
        clauses.append(f"{event} < {mark}")
        params.append(filt.happened_before)
    known = filt.known_at
    if known is not None:
        clauses.append(f"{m}.created_at <= {mark}")
        params.append(known)
    # Superseded (and its validity closed) as far as was known at the record time asked about.
    if known is None:
        superseded_then = f"{m}.superseded_by IS NOT NULL"
        closed = f"{m}.valid_until IS NOT NULL"
        then_params: list[Any] = []
    else:
        superseded_then = f"({m}.superseded_by IS NOT NULL AND ({m}.superseded_at IS NULL OR {m}.superseded_at <= {mark}))"
        closed = f"({m}.valid_until IS NOT NULL AND ({m}.superseded_at IS NULL OR {m}.superseded_at <= {mark}))"
        then_params = [known]
    if filt.valid_at is not None:
        clauses.append(f"{event} <= {mark}")  # an unknown start counts from when it was recorded
        params.append(filt.valid_at)
        clauses.append(f"NOT ({closed} AND {m}.valid_until <= {mark})")
        params.extend([*then_params, filt.valid_at])
        if not filt.include_superseded:
            clauses.append(f"(NOT {superseded_then} OR {closed})")
            params.extend([*then_params, *then_params])
    elif not filt.include_superseded:
        clauses.append(f"NOT {superseded_then}")
        params.extend(then_params)
    return clauses, params
