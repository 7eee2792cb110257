"""The scheduler: ``engram maintain`` runs every due job once; a server runs it periodically.

Jobs, in order: ``backup`` (before anything deletes), ``summaries`` (before anything deletes too:
a period's summary covers the conversation entries hygiene then expires), ``hygiene``, ``decay``,
``retention``, ``consolidate``, ``vacuum``. Each is due when its interval
(``lifecycle.schedule``) has passed since its last run; the last-run times and one-line results
are kept in a small JSON state file beside the database (in memory for the in-memory store).
Every job is idempotent - running it twice in a row changes nothing the second time - and logs
what it did. When a deleting job is due and no backup ran in this pass, one automatic backup is
taken first (``lifecycle.backup.before_risky``).

A pass acts for one agent or for the whole store. ``Maintenance(engram, ..., agent="alice")``
runs hygiene, decay, retention, consolidation and summaries over alice's memories only (her
scope and her sessions): another agent's memories, and global ones that every agent sees, are
left as they are, since one agent never changes or deletes what another agent reads.
``agent=None`` is the store-wide pass (every agent and global), an operator's action:
``engram maintain`` with no agent chosen, ``engram maintain --all-agents``, ``engram serve``'s
background upkeep. ``backup`` and ``vacuum`` work on the database file, so they are store-wide
whoever runs them (they change no memory), as is the repair that embeds memories stored without
a vector. Each agent's pass keeps its own schedule in the state file (``agents.<name>``); the
store-wide jobs and the store-wide pass keep theirs at the top.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engram import jsondoc
from engram.errors import EngramError, ValidationError
from engram.lifecycle import JOBS, consolidate, decay, hygiene, retention, summaries
from engram.lifecycle.common import JobReport
from engram.lifecycle.settings import LifecycleSettings
from engram.text import counted

if TYPE_CHECKING:
    from engram.backends.base import FileCare
    from engram.engine import Engram

log = logging.getLogger("engram.lifecycle")

# (phase, done, total): a pass tells which job runs (``consolidate: comparing`` for a job's own
# phase) and how far it is; a total of 0 is not known, as for the single-step backup and VACUUM.
Progress = Callable[[str, int, int], None]


def _silent(phase: str, done: int, total: int) -> None:
    pass

_DELETING = ("hygiene", "decay", "retention", "consolidate")
STORE_WIDE_JOBS: tuple[str, ...] = ("backup", "vacuum")  # the database file's, whoever runs the pass


@dataclass
class MaintenanceReport:
    agent: str | None = None  # whose memories the pass maintained; None: the whole store
    ran: list[JobReport] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # job -> why (not due, disabled, n/a)


class Maintenance:
    """Runs lifecycle jobs over one ``Engram``'s store: ``agent``'s memories, or with
    ``agent=None`` every memory in it (see module docstring)."""

    def __init__(
        self,
        engram: Engram,
        settings: LifecycleSettings,
        *,
        care: FileCare | None = None,
        state_path: Path | None = None,
        summarizer: summaries.Summarizer | None = None,
        rng: random.Random | None = None,
        agent: str | None = None,
    ) -> None:
        self.engram = engram
        self.agent = agent
        self.settings = settings
        self.care = care  # backups and VACUUM of the database file, when it has one
        self.state_path = state_path
        self.summarizer = summarizer
        self.rng = rng or random.Random()
        self._memory_state: dict[str, Any] = {}

    # --- state -----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        if self.state_path is None:
            return self._memory_state
        return _read_state(self.state_path)

    def _save(self, state: dict[str, Any]) -> None:
        if self.state_path is None:
            self._memory_state = state
            return
        from engram.store.jsonfile import atomic_write

        atomic_write(self.state_path, json.dumps(state, indent=1))

    def _record(self, state: dict[str, Any], job: str) -> dict[str, Any]:
        """Where ``job``'s last run is kept: the top of the state for the store-wide pass and the
        store-wide jobs, else under this agent (its pass must not make another's look done)."""
        if self.agent is None or job in STORE_WIDE_JOBS:
            return state
        agents = state.get("agents")
        if not isinstance(agents, dict):
            agents = state["agents"] = {}
        own = agents.get(self.agent)
        if not isinstance(own, dict):
            own = agents[self.agent] = {}
        return own

    def last_runs(self) -> dict[str, float]:
        """When each job last ran for this pass (this agent's, or the store-wide one)."""
        state = self.state()
        out: dict[str, float] = {}
        for job in JOBS:
            when = self._record(state, job).get("last_run", {}).get(job)
            if isinstance(when, int | float):
                out[job] = float(when)
        return out

    # --- what is due -------------------------------------------------------------------------
    def _enabled(self, job: str) -> str | None:
        """Why ``job`` cannot run here, or None."""
        s = self.settings
        flags = {"hygiene": s.hygiene.enabled, "decay": s.decay.enabled, "retention": s.retention.enabled,
                 "consolidate": s.consolidation.enabled, "summaries": s.summaries.enabled,
                 "backup": s.backup.enabled, "vacuum": True}
        if not flags[job]:
            return "disabled"
        if job in ("backup", "vacuum") and self.care is None:
            return "not a SQLite store"
        return None

    def due(self, now: float) -> list[str]:
        last = self.last_runs()
        interval = {job: getattr(self.settings.schedule, f"{job}_s") for job in JOBS}
        return [job for job in JOBS if self._enabled(job) is None and now - last.get(job, float("-inf")) >= interval[job]]

    # --- running -----------------------------------------------------------------------------
    def run(self, *, now: float | None = None, only: Collection[str] | None = None, force: bool = False,
            progress: Progress | None = None) -> MaintenanceReport:
        """Run every due job once (``only`` narrows the jobs; ``force`` ignores the schedule).
        ``progress(phase, done, total)`` follows the pass: each job's name as it starts, and the
        counts of the ones that go through memories (embedding, consolidation, summaries).
        Raises ``StorageError`` on a closed engine before anything is read or changed: every job
        writes to the store directly, not through the engine's write queue, so this is where a
        pass is refused as every other write of a closed engine is."""
        self.engram.writes.refuse_when_closed()
        tell = progress or _silent
        if only is not None and (isinstance(only, str | bytes) or not isinstance(only, Collection)):
            # (a name given alone was read letter by letter: "unknown job "h"", naming no mistake made)
            raise ValidationError("only", f"got {jsondoc.shown(only)} ({type(only).__name__})",
                                  f"a list of job names, e.g. [\"hygiene\"]: {', '.join(JOBS)}")
        for job in only or ():
            if job not in JOBS:
                raise ValidationError("job", f"unknown job {jsondoc.shown(job)}", JOBS)
        now = self.engram.clock() if now is None else now
        wanted = [j for j in JOBS if not only or j in only]
        due = set(self.due(now))
        report = MaintenanceReport(agent=self.agent)
        healed = self._heal_vectors(tell)
        if healed is not None:
            report.ran.append(healed)
        state = self.state()
        backed_up = False
        for job in wanted:
            why = self._enabled(job)
            if why is None and not force and job not in due:
                why = "not due"
            if why is not None:
                report.skipped[job] = why
                continue
            if job in _DELETING and not backed_up and self.care is not None \
                    and self.settings.backup.before_risky and self._enabled("backup") is None:
                tell("backup", 0, 0)
                self.care.backup("pre-maintenance")
                backed_up = True
            tell(job, 0, 0)
            result = self._run_job(job, now, tell)
            backed_up = backed_up or job == "backup"
            log.info("maintenance %s", result.line())
            report.ran.append(result)
            record = self._record(state, job)
            record.setdefault("last_run", {})[job] = now
            record.setdefault("last_result", {})[job] = result.line()
            self._save(state)
        self.engram.metrics.save()
        return report

    def _heal_vectors(self, tell: Progress) -> JobReport | None:
        """Embed memories stored without a vector (a crash between the write and its embedding,
        or an embedder that was down): part of every pass, cheap when there are none."""
        if self.engram.embedder is None or not self.engram.store.missing_vectors(limit=1):
            return None
        try:
            tell("vectors", 0, 0)
            done = self.engram.embed_missing(lambda n, total: tell("vectors", n, total))
        except EngramError as exc:  # the embedder is down: recall falls back to text; try next pass
            return JobReport("vectors", notes=(f"not embedded now: {exc}",))
        return JobReport("vectors", changed=done, notes=(f"embedded {counted(done, 'memory')} stored without a vector",))

    def _run_job(self, job: str, now: float, tell: Progress) -> JobReport:
        s, engram, agent = self.settings, self.engram, self.agent
        if job == "hygiene":
            return hygiene.run(engram, s.hygiene, now=now, rng=self.rng, agent=agent)
        if job == "decay":
            return decay.run(engram, s.decay, now=now, agent=agent)
        if job == "retention":
            return retention.run(engram, s.retention, now=now, agent=agent)
        if job == "consolidate":
            return consolidate.run(engram, s.consolidation, now=now, agent=agent,
                                   progress=lambda phase, n, total: tell(f"consolidate: {phase}", n, total))
        if job == "summaries":
            return summaries.run(engram, s.summaries, now=now, summarizer=self.summarizer,
                                 agents=None if agent is None else [agent],
                                 progress=lambda n, total: tell("summaries", n, total))
        assert self.care is not None  # checked by _enabled
        if job == "backup":
            info = self.care.backup("scheduled")
            return JobReport("backup", notes=(f"wrote {info.path.name} (the whole store)",))
        from engram.lifecycle.backup import vacuum_embedding_cache

        before, after = self.care.vacuum()
        cache = vacuum_embedding_cache(engram)  # the home's, as ``engram vacuum`` rebuilds it
        cached = () if cache is None else (f"embedding cache {cache[0]} -> {cache[1]} bytes",)
        return JobReport("vacuum", notes=(f"size {before} -> {after} bytes (the whole file)", *cached))


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}  # none yet, or damaged: every job is due, as on a new store


def _dict_at(holder: dict[str, Any], name: str) -> dict[str, Any]:
    """``holder[name]``, made an empty dict when it is missing or not one."""
    if not isinstance(holder.get(name), dict):
        holder[name] = {}
    return holder[name]


def _merge_runs(into: dict[str, Any], record: dict[str, Any]) -> None:
    """Take each job's last run (and its result) from ``record`` where it is later than ``into``'s."""
    runs, results = record.get("last_run"), record.get("last_result")
    if not isinstance(runs, dict):
        return
    for job, when in runs.items():
        if job not in JOBS or not isinstance(when, int | float):
            continue
        kept = _dict_at(into, "last_run")
        if not isinstance(kept.get(job), int | float) or kept[job] < when:
            kept[job] = when
            if isinstance(results, dict) and isinstance(results.get(job), str):
                _dict_at(into, "last_result")[job] = results[job]


def carry_schedule(source: Path, target: Path) -> bool:
    """Carry the schedule kept at ``source`` (last runs, store-wide and per agent) into the state
    file at ``target``, for a store copied to another database: without it the first pass there
    runs every job again. Per job the later run wins, so carrying twice, or onto a store already
    maintained there, moves nothing back. False when ``source`` holds no schedule; raises
    ``StorageError`` when ``target`` cannot be written."""
    carried = _read_state(source)
    if not carried:
        return False
    merged = _read_state(target)
    _merge_runs(merged, carried)
    agents = carried.get("agents")
    for agent, record in (agents.items() if isinstance(agents, dict) else ()):
        if isinstance(record, dict):
            _merge_runs(_dict_at(_dict_at(merged, "agents"), agent), record)
    from engram.store.jsonfile import atomic_write

    atomic_write(target, json.dumps(merged, indent=1))
    return True


class Runs(Protocol):
    """What ``run_periodically`` runs: a ``Maintenance``, or several (``agent_databases.EveryAgentsUpkeep``)."""

    def run(self) -> object: ...


def run_periodically(
    maintenance: Runs, interval_s: float, stop: threading.Event,
    on_error: Callable[[BaseException], None] | None = None,
    after_first: Callable[[BaseException | None], None] | None = None,
) -> threading.Thread:
    """Start a daemon thread that runs due jobs every ``interval_s`` until ``stop`` is set (servers).
    ``after_first`` is told how the first pass ended (``None``, or its error): a server is ready
    only after it."""

    def loop() -> None:
        first = True
        while not stop.is_set():
            error: BaseException | None = None
            try:
                maintenance.run()
            except Exception as exc:  # a failing job must not kill the server's maintenance loop
                log.exception("maintenance run failed")
                error = exc
                if on_error:
                    on_error(exc)
            if first and after_first is not None:
                after_first(error)
            first = False
            stop.wait(interval_s)

    thread = threading.Thread(target=loop, name="engram-maintenance", daemon=True)
    thread.start()
    return thread


__all__ = ["JOBS", "STORE_WIDE_JOBS", "Maintenance", "MaintenanceReport", "Progress", "carry_schedule",
           "run_periodically"]
