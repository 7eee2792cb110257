"""Daily and weekly summaries of an agent's memories (the PHP entity's ``memory_summaries``).

A summary is stored as a memory of type ``summary`` in the scope its sources live in, keyed
``summary:<daily|weekly>:<period start date>`` and carrying ``period_start``, ``period_end``,
``period_type`` and ``source_memory_count`` in its metadata. An agent's own memories make its
summary in the agent's scope; a session's memories make their own in that session's scope, since
a summary in the agent's scope would show one session's content to every other session of the
agent (a session sees its own memories, its agent's and global ones, never a sibling's). Storing them as memories (rather than
in a table of their own) makes them recallable through the same pipeline (full text, vectors,
scopes), exported in snapshots, audited, and available on every backend with no new store
contract; the deterministic key makes the job idempotent (a period already summarised is skipped).
Hygiene, decay and retention skip the ``summary`` type by default.

The text comes from a ``Summarizer`` (``summarize(texts) -> str``: the configured LLM) or, when
there is none or it fails, from an extractive summary: the most important source memories, in
time order, one line each, within ``max_chars``. The text is cut to fit the store's
``max_content_chars`` with its header when that limit is the lower, as every memory is. Periods
are UTC days and ISO weeks (Monday start); only periods that have ended are summarised, so a summary never misses later memories.
The text is screened by the engine's PII policy (``privacy.pii``) as ``remember`` screens a memory's.
"""

from __future__ import annotations

import datetime as dt
import logging
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from engram import jsondoc
from engram.errors import EngramError, ValidationError
from engram.events import MemoryEvent
from engram.lifecycle.common import DAY, JobReport, announced_together
from engram.lifecycle.settings import SummarySettings
from engram.model import MAX_LIST_LIMIT, Category, Memory, MemoryDraft, Scope, make_filter, parse_limit
from engram.text import counted

if TYPE_CHECKING:
    from engram.engine import Engram

log = logging.getLogger("engram.lifecycle.summaries")

PeriodType = Literal["daily", "weekly"]
SUMMARY_TYPE = "summary"


class Summarizer(Protocol):
    """Condenses texts into one summary; LLM providers implement it."""

    def summarize(self, texts: Sequence[str]) -> str: ...


@dataclass(frozen=True, slots=True)
class Period:
    type: PeriodType
    start: float
    end: float  # exclusive

    @property
    def key(self) -> str:
        return f"summary:{self.type}:{dt.datetime.fromtimestamp(self.start, dt.UTC):%Y-%m-%d}"


def periods_ending_by(now: float, period_type: PeriodType, lookback_days: int) -> list[Period]:
    """Complete periods of ``period_type`` that ended at or before ``now``, within the lookback."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    length = dt.timedelta(days=1 if period_type == "daily" else 7)
    end = today if period_type == "daily" else today - dt.timedelta(days=today.weekday())
    oldest = today - dt.timedelta(days=lookback_days)
    out = []
    while end > oldest:  # every period that overlaps the lookback window
        out.append(Period(period_type, (end - length).timestamp(), end.timestamp()))
        end -= length
    return out


def extractive(memories: Sequence[Memory], *, items: int, max_chars: int) -> str:
    """The ``items`` most important memories (ties: earlier first), in time order, one line each."""
    chosen = sorted(memories, key=lambda m: (-m.importance, m.created_at))[:items]
    lines, used = [], 0
    for memory in sorted(chosen, key=lambda m: m.created_at):
        line = "- " + " ".join(memory.content.split())
        if used + len(line) > max_chars:
            line = line[: max(0, max_chars - used - 1)].rstrip() + "…"
        if len(line) > 2:
            lines.append(line)
            used += len(line) + 1
        if used >= max_chars:
            break
    more = len(memories) - len(chosen)
    if more > 0 and used + 30 < max_chars:
        lines.append(f"(and {more} more)")
    return "\n".join(lines)


def sources(engram: Engram, scope: Scope, period: Period) -> list[Memory]:
    """The memories of ``scope`` (an agent's own, or one session's) created in the period,
    summaries excluded."""
    return _recent(engram, [scope.agent] if scope.agent else [], period.start, period.end).get(scope, [])


def _recent(engram: Engram, agents: Sequence[str] | None, since: float, until: float) -> dict[Scope, list[Memory]]:
    """The memories of each scope of the ``agents`` (every agent's when None: their own scopes and
    their sessions) created in ``[since, until)``, summaries excluded, oldest first: one pass over
    the store for a whole run, whose periods then take their slices (``_in``), instead of one pass
    per scope and period."""
    wanted = None if agents is None else set(agents)
    found: dict[Scope, list[Memory]] = {}
    for m in engram.store.iter_all():
        agent = m.scope.agent
        if agent is None or (wanted is not None and agent not in wanted):
            continue
        if m.type != SUMMARY_TYPE and since <= m.created_at < until:
            found.setdefault(m.scope, []).append(m)
    for memories in found.values():
        memories.sort(key=lambda m: m.created_at)
    return found


def _in(memories: list[Memory], period: Period) -> list[Memory]:
    """Of ``memories`` (oldest first), those created in ``period``."""
    return memories[bisect_left(memories, period.start, key=lambda m: m.created_at):
                    bisect_left(memories, period.end, key=lambda m: m.created_at)]


def summarize_period(
    engram: Engram,
    scope: Scope,
    period: Period,
    settings: SummarySettings,
    *,
    summarizer: Summarizer | None,
    now: float,
    found: Sequence[Memory] | None = None,
    announce: Callable[[MemoryEvent], None] | None = None,
) -> Memory | None:
    """Store the summary of one period of ``scope`` (an agent's or a session's; None when it has
    no memories or already has a summary); ``found``: its ``sources`` when the caller has read
    them already. Its ``stored`` event is emitted, or handed to ``announce`` (``run`` announces a
    run's summaries together)."""
    if found is not None and not found:
        return None  # nothing to summarise: no need to look for a summary
    if engram.store.get(period.key, make_filter([scope])) is not None:
        return None
    found = sources(engram, scope, period) if found is None else list(found)
    if not found:
        return None
    label = dt.datetime.fromtimestamp(period.start, dt.UTC).strftime("%Y-%m-%d")
    header = f"{period.type.capitalize()} summary from {label} ({counted(len(found), 'memory')}):\n"
    # The summary is stored as any memory is, so header and text keep within the store's content
    # limit: ``max_chars`` caps the text, the limit (when lower) cuts it to what fits.
    max_chars = max(0, min(settings.max_chars, engram.max_content_chars - len(header)))
    text, method = "", "extractive"
    if summarizer is not None:
        try:
            text = summarizer.summarize([m.content for m in found]).strip()[:max_chars]
            method = "llm"
        except EngramError as exc:  # an LLM failure degrades to the extractive summary
            log.warning("summarizer failed for %s (%s); using the extractive summary", period.key, exc)
    if not text:
        text, method = extractive(found, items=settings.extractive_items, max_chars=max_chars), "extractive"
    # Written past ``remember`` (its key and time are the period's), so screened here by the same
    # policy: the text quotes its sources, which may hold PII stored before ``redact`` was set or
    # kept under ``warn``, and a model's summary may repeat it.
    content, warnings = engram.privacy.screen(header + text)
    for warning in warnings:
        log.log(logging.WARNING if engram.privacy.mode == "warn" else logging.INFO, "%s in %s: %s", period.key,
                scope, warning)
    draft = MemoryDraft(
        # Cut after screening (a marker can be longer than what it replaced); a limit shorter than
        # the header itself (a few dozen characters) keeps what fits of it.
        content=content[: engram.max_content_chars],
        scope=scope, key=period.key, category=Category.KNOWLEDGE, type=SUMMARY_TYPE,
        tags=("summary", period.type), importance=settings.importance, source="summaries",
        metadata={"period_start": period.start, "period_end": period.end, "period_type": period.type,
                  "source_memory_count": len(found), "method": method},
        created_at=period.end,
    )
    result = engram.store.upsert(draft, proposed_key=period.key, now=now)
    if result.action == "created":
        engram._embed([result.memory])
        (announce or engram.events.emit)(MemoryEvent("stored", (result.memory,), engram.scope, "maintenance",
                                                     f"{period.type} summary", now))
    return result.memory


def run(
    engram: Engram,
    settings: SummarySettings,
    *,
    now: float,
    summarizer: Summarizer | None = None,
    agents: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    period_type: PeriodType | None = None,
) -> JobReport:
    """Summarise every ended day/week in the lookback that has memories and no summary yet, in
    each scope of the ``agents`` (every agent's when None) that has memories then; ``period_type``
    ("daily" or "weekly") makes that kind alone (still only when the settings summarise it);
    ``progress(done, total)`` counts the periods looked at (each scope's days and weeks)."""
    kinds: list[PeriodType] = [k for k, on in (("daily", settings.daily), ("weekly", settings.weekly))
                               if on and period_type in (None, k)]
    periods = [period for kind in kinds for period in periods_ending_by(now, kind, settings.lookback_days)]
    recent = _recent(engram, agents, min(p.start for p in periods), max(p.end for p in periods)) if periods else {}
    # Agents in the order given (or by name), each one's own scope before its sessions.
    rank = {agent: n for n, agent in enumerate(agents or ())}
    scopes = sorted(recent, key=lambda s: (rank.get(s.agent or "", 0), s.agent or "", s.session or ""))
    work = [(scope, period) for scope in scopes for period in periods]
    made = 0
    with announced_together(engram) as announce:
        for done, (scope, period) in enumerate(work, 1):
            if summarize_period(engram, scope, period, settings, summarizer=summarizer, now=now,
                                found=_in(recent[scope], period), announce=announce):
                made += 1
            if progress:
                progress(done, len(work))
    return JobReport("summaries", changed=made, notes=(f"created {made}",))


def list_summaries(engram: Engram, period_type: str | None = None, limit: int = 50, *,
                   make: SummarySettings | None = None) -> list[Memory]:
    """Summaries visible to this ``Engram``, newest period first. With ``make``, the missing
    summaries of its agent's ended periods are created first (``run``; of ``period_type`` alone
    when given, as only those are listed), once the arguments are checked: a bad ``period_type``
    or ``limit`` writes nothing. Raises ``ValidationError``."""
    if period_type is not None and period_type not in ("daily", "weekly"):
        raise ValidationError("period_type", f"unknown period {jsondoc.shown(period_type)}", ["daily", "weekly"])
    limit = parse_limit(limit, MAX_LIST_LIMIT)
    if make is not None:
        only: PeriodType | None = "daily" if period_type == "daily" else "weekly" if period_type else None
        run(engram, make, now=engram.clock(), agents=[engram.scope.agent or "default"], period_type=only)
    from engram.engine import Filters

    metadata = {"period_type": period_type} if period_type else None
    return engram.list(Filters(type=SUMMARY_TYPE, metadata=metadata), order="recent", limit=limit)


__all__ = ["DAY", "Period", "Summarizer", "extractive", "list_summaries", "periods_ending_by", "run",
           "summarize_period"]
