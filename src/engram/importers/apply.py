"""Write a ``Plan`` through an ``Engram``: memories, and the changes to memories earlier imports
made, in one all-or-nothing store import; then conversation messages and summaries, then operator notes
(their ``MEMORY.md`` checked before the first write: ``_check_operator_notes``).

Every record is turned into a ``Memory`` (validated, PII screened as ``remember`` does) before
anything is written, so a bad record raises ``SnapshotError`` naming its place and stores nothing;
so is each conversation message and summary the import adds, as the history will check it
(``History.check_many``, ``History.checked_summary``: PII screening, a tool result's call), so a
message the history refuses stores no memory either. Each message is screened once (``History.screen``)
and appended as screened; a conversation that changes between the check and its append is reported
and left without the import's messages, the rest of the import going on (``_append_history``).
Ids come from the records' source identities and the agent each joins: a memory that agent already
imported is skipped by id, which makes a second run a no-op, and another agent importing the same
source gets its own copy. A memory that agent forgot since (``audit.forgotten_from``: the audit trail's
record) is not stored again: a forget is on purpose, and a re-import of a newer export must not
undo it (with ``lifecycle.audit`` off there is no record, and it comes back). A record marked
``refresh`` (Zep's facts, which Zep closes and rewrites in place; mem0's and mcp-memory-service's
memories, which they update in place, when newer than the memory) updates the memory it finds with what the source
changed since (``_changes``); a forgotten one is left out all the same. A key
another memory already holds in the same scope gets a ``-2``, ``-3``… suffix rather than being
dropped. With ``keep_agents`` the source's users/agents become engram agents; without it (an HTTP
caller, or ``--into-agent``) everything joins the importing agent.

With one database per agent (``per_agent_databases``) each agent's records are checked against, and
written through, that agent's own engine (``_databases``): its file holds what it imported before,
its audit trail what it forgot, and it takes its memories in one transaction after its own backup.
Every record of every agent is checked before the first write in any of them; the databases are
then written in turn (one transaction each: SQLite commits no transaction across two files).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engram import jsondoc
from engram.agent_databases import not_made_yet
from engram.audit import forgotten_from
from engram.bulk import store_and_embed
from engram.errors import SnapshotError, StorageError, ValidationError
from engram.history.base import check_summary
from engram.history.keys import normal_key, shown_key
from engram.ids import key_from_content
from engram.importers.base import HistoryEntry, HistorySummary, Plan, Record, record_id
from engram.model import (
    MAX_TAGS,
    TAGS_ALLOWED,
    Memory,
    MemoryFilter,
    Message,
    Scope,
    WriteResult,
    layer_for_type,
    make_filter,
    make_message,
    make_scope,
    parse_content,
    parse_key,
    parse_search_context,
    parse_short_text,
)
from engram.model.fields import CREATED_AT_LEEWAY_S
from engram.store.base import ImportUpdate
from engram.temporal.instants import record_times, shown_time
from engram.text import counted
from engram.where import Compare
from engram.writes import PendingWrite, announce

if TYPE_CHECKING:
    from pathlib import Path

    from engram.engine import Engram
    from engram.history.service import History, Screened

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True, slots=True)
class ImportedConversation:
    """A conversation the source titles (ChatGPT's, Claude.ai's), as the import left it."""

    key: str  # as users write it: chatgpt:6740c5b2-…
    title: str
    messages_added: int


@dataclass(frozen=True, slots=True)
class ImportSummary:
    kind: str
    imported: int
    skipped: int  # already there, unchanged (or a copy the source repeats)
    # Already there and brought up to date with what the source changed since (``Record.refresh``).
    updated: int = 0
    # Not imported: forgotten in engram since an earlier import (the audit trail records it).
    forgotten: int = 0
    messages_imported: int = 0
    messages_skipped: int = 0
    summaries_imported: int = 0
    summaries_skipped: int = 0  # the conversation already had it, or a summary of its own
    operator_notes: str = "none"  # none | added | present | skipped | failed (a warning says why)
    warnings: tuple[str, ...] = field(default_factory=tuple)
    # The engram agents whose memories or conversations the records are in (new or already there):
    # a source's own users and agents become engram agents, which the importing one does not see.
    agents: tuple[str, ...] = ()
    # Those of them holding some of the memories in the agent's own scope, which its list, count and
    # recall show (not an agent whose memories are all in its sessions, nor one given only messages).
    listed_agents: tuple[str, ...] = ()
    # The sessions of those agents the memories are in (a mem0 ``run_id``), each as a memory's scope
    # reads (``session:AGENT/SESSION``): an agent's list, count and recall leave a session's out.
    sessions: tuple[str, ...] = ()
    # The source's titled conversations in its order, each with the messages this import added.
    conversations: tuple[ImportedConversation, ...] = ()


def apply_plan(engram: Engram, plan: Plan, *, keep_agents: bool = True, operator_notes: bool = True,
               progress: Progress | None = None, backup_new: bool = True) -> ImportSummary:
    """``backup_new``: take the automatic backup (``lifecycle.backup.before_risky``) before a write
    that only adds new memories too, as an import of a file does; False (an integration's routine
    adds, ``remember``'s kind of write) takes it only before one that changes memories already stored."""
    report = progress or (lambda phase, done, total: None)
    now = engram.clock()
    own = engram.scope.agent or "default"
    # Every record is checked, in every database it goes to, before the first write anywhere.
    by_source: dict[str, Record] = {}
    too_long: list[tuple[Record, int]] = []
    warnings: list[str] = []
    parts = []
    for agent, target, records in _databases(engram, plan, own, keep_agents):
        memories, first, gone, found = _memories(engram, target, plan, records, keep_agents, now, own, by_source,
                                                 too_long)
        warnings += found
        parts.append((agent, target, memories, first, gone))
    if too_long:
        raise _too_long(too_long, engram.max_content_chars)
    messages = _messages(plan, own, keep_agents, now)  # validated before the first write
    summaries = _summaries(plan, own, keep_agents)
    forgotten: list[Memory] = []
    held = []
    for agent, target, memories, first, gone in parts:
        existing = {m.id: m for m in target.store.get_many([m.id for m in memories])} if memories else {}
        forgotten += [m for m in memories if m.id in gone and m.id not in existing]
        held.append((agent, target, [m for m in memories if m.id not in gone or m.id in existing], first, existing))
    if forgotten:
        warnings.append(_forgotten_warning(forgotten, own))
    # What the history would refuse of the messages and summaries is refused now, before the first
    # write (``_history_batches``, ``_check_summaries``): after it, the memories were stored already.
    by_place = _by_place(plan.history)
    history_on = bool(messages or summaries) and engram.history.enabled  # (no history opened for none)
    batches: _Batches = {}
    present = len(messages)  # with history off, none is imported (``History.off_reason``)
    if history_on:
        stored = _stored_histories(engram)
        batches, present = _history_batches(engram, messages, by_place, stored)
        _check_summaries(engram, summaries, stored)
    _check_operator_notes(engram, plan, operator_notes)  # appended last: refused now, before the first write
    writes: list[_Write] = []
    kept: list[Memory] = []
    for agent, target, memories, first, existing in held:
        kept += memories
        changes = _refreshing(target, _changes(target, plan.entry or plan.kind, memories, first, existing, warnings))
        writes.append(_Write(agent, target, _unique_keys(target, [m for m in memories if m.id not in existing]),
                             changes))
    imported = updated = 0
    several = sum(1 for write in writes if write.fresh or write.changes) > 1
    for write in writes:
        imported += _write(engram, write, plan.kind, report, several, backup_new)
        updated += len(write.changes)
    if not history_on:
        if messages or summaries:
            warnings.append(f"{counted(len(messages), 'conversation message')} and "
                            f"{counted(len(summaries), 'summary')} not imported: {engram.history.off_reason}")
        added, gained = 0, {}
        summaries_set, summaries_kept = 0, len(summaries)
    else:
        added, gained = _append_history(engram, batches, present, len(messages), report, warnings, by_place)
        summaries_set, summaries_kept = _set_summaries(engram, summaries, warnings)
    notes = _operator_notes(engram, plan, operator_notes, warnings)
    # Every record read is imported, updated, forgotten or skipped (a copy repeated in the source is skipped).
    agents = ({m.scope.agent for m in kept if m.scope.agent} | {agent for (agent, _), _, _ in messages}
              | {agent for (agent, _), _ in summaries})
    listed = {m.scope.agent for m in kept if m.scope.agent and not m.scope.session}
    sessions = sorted({m.scope for m in kept if m.scope.session}, key=lambda s: (s.agent or "", s.session or ""))
    titled = tuple(ImportedConversation(shown_key(key), title, gained.get((own, key), 0))
                   for key, title in plan.titles.items())
    return ImportSummary(plan.kind, imported, len(plan.records) - imported - updated - len(forgotten),
                         updated=updated, forgotten=len(forgotten),
                         messages_imported=added, messages_skipped=present, summaries_imported=summaries_set,
                         summaries_skipped=summaries_kept, operator_notes=notes,
                         warnings=tuple([*plan.warnings, *warnings]), agents=tuple(sorted(agents)),
                         listed_agents=tuple(sorted(listed)),
                         sessions=tuple(str(s) for s in sessions), conversations=titled)


def _databases(engram: Engram, plan: Plan, own: str,
               keep_agents: bool) -> list[tuple[str | None, Engram, list[Record]]]:
    """The databases the records go to: each with the agent whose it is (None: ``engram``'s), the
    engine the records are checked against (what it holds, what its agent forgot) and its records.
    One database of every agent: ``engram``, with them all. One database per agent
    (``per_agent_databases``): each agent's own, with that agent's records, ``engram`` for its own
    agent's; written through ``engram``, another agent's memories landed in the importing agent's
    file, where no agent found them. Checked through a reading view (``for_agent(reading=True)``),
    so an import refused for a bad record makes no agent's database; ``_write`` opens it to write."""
    if engram.agent_databases is None:
        return [(None, engram, list(plan.records))]
    by_agent: dict[str, list[Record]] = {}
    for record in plan.records:
        by_agent.setdefault(_agent(record, own, keep_agents), []).append(record)
    return [(None, engram, records) if agent == own else (agent, engram.for_agent(agent, reading=True), records)
            for agent, records in by_agent.items()]


@dataclass(frozen=True, slots=True)
class _Write:
    """What an import writes into one database, checked: its new memories and its updates."""

    agent: str | None  # whose database it is (``_databases``): None for the importing engine's own
    engram: Engram  # the engine it was checked against
    fresh: list[Memory]
    changes: list[tuple[Memory, PendingWrite]]


def _write(importer: Engram, write: _Write, kind: str, report: Progress, several: bool, backup_new: bool = True) -> int:
    """Store ``write``'s new memories and make its updates in one transaction of its database
    (after that database's backup before a risky write, the engine's ``guard``: one backup of each
    database written; with ``backup_new`` False, only one that changes memories), embed them and
    announce the updates; returns how many were imported.
    Another agent's database is opened to write here (``importer.for_agent``: made when new; a view
    opened so closes with ``importer``'s engine). ``several``: the import writes into more than one
    database, and the progress phases name the agent whose database each is."""
    fresh, changes = write.fresh, write.changes
    if not fresh and not changes:
        return 0
    engram = write.engram
    if write.agent is not None and not_made_yet(engram):  # checked against no database yet: make it now
        engram = importer.for_agent(write.agent)
    whose = f" ({engram.scope.agent or 'default'})" if several else ""
    report(f"storing{whose}", 0, len(fresh))
    # The rows are written (the changes too, in the same transaction: all or nothing) and
    # announced on another thread while the model embeds them.
    result = store_and_embed(engram, fresh, reason=f"import from {kind}",
                             progress=lambda done, total: report(f"embedding{whose}", done, total),
                             stored=lambda: report(f"storing{whose}", len(fresh), len(fresh)),
                             updates=[ImportUpdate(held.id, pending.draft, pending.now) for held, pending in changes],
                             guard_new=backup_new)
    _announce_updates(engram, changes)
    return result.imported


def _agent(record: Record, own: str, keep_agents: bool) -> str:
    return record.agent if keep_agents and record.agent else own


RecordKey = tuple[str, str]  # (source id, the engram agent it joins): one source record may join several agents


def _key(record: Record, agents: dict[int, str]) -> RecordKey:
    return record.source_id, agents[id(record)]


def _ids(engram: Engram, plan: Plan, records: list[Record],
         agents: dict[int, str]) -> tuple[dict[RecordKey, str], set[str]]:
    """Each record's memory id, by its source id and agent, and the ids of those that agent forgot.
    The id is derived from the source identity and the agent it joins, so only that agent's earlier
    import of it is found (another agent's import of the same source neither hides it nor is
    revealed by it), and a record two agents share (a Letta block several agents name) is a memory
    of each. A stored id that very agent holds is used
    instead when it is the record's own: the engram id engram's exports carry (the record is that
    memory), or the id imports before 2026-11 gave (one for every agent), so re-runs skip them.
    When none of these is that agent's now and it forgot one of them, or the derived id
    (``audit.forgotten_from``, asked once for the whole plan), the record's id is among the forgotten:
    a forget of a memory an old import or an engram export made counts too. A record whose id no
    longer holds its time (``Record.kept_as``) that none of these ids finds is looked for by the
    source id its memory keeps (``_kept_as``); one the source gave no time when an earlier import
    made its memory, by the id that import gave (``_undated``)."""
    ids: dict[RecordKey, str] = {}
    known: dict[RecordKey, list[str]] = {}
    for record in records:
        key = _key(record, agents)
        candidates = imported_ids(plan.kind, record, key[1])
        known[key], ids[key] = candidates[:-1], candidates[-1]
    asked = {i for key, candidates in known.items() for i in (*candidates, ids[key])}
    held = {m.id: m.scope.agent for m in engram.store.get_many(list(asked))}
    unfound = [(key, r) for r in records for key in [_key(r, agents)]
               if r.kept_as and not any(i in held and held[i] == key[1] for i in (*known[key], ids[key]))]
    for key, memory_id in _kept_as(engram, plan, unfound).items():
        known[key], held[memory_id] = [memory_id, *known[key]], key[1]
    undated = [(key, r) for r in records for key in [_key(r, agents)]
               if r.undated_as is not None and not any(i in held and held[i] == key[1] for i in (*known[key], ids[key]))]
    for key, memory_id in _undated(engram, plan.kind, undated).items():
        known[key], held[memory_id] = [memory_id, *known[key]], key[1]
    # Only what is not that agent's now can have been forgotten by it (a stored id is present).
    # Asked of the trail itself, not ``Engram.forgotten`` (this view's agent only): the import
    # writes into every agent its records join (``keep_agents``), so it asks about each of them.
    lost = forgotten_from(engram.backend.audit_log(), {
        (i, key[1]) for key, candidates in known.items() for i in (*candidates, ids[key])
        if i not in held or held[i] != key[1]})
    forgotten: set[str] = set()
    for key, candidates in known.items():
        kept = next((i for i in (*candidates, ids[key]) if i in held and held[i] == key[1]), None)
        if kept is not None:
            ids[key] = kept
        elif any((i, key[1]) in lost for i in (*candidates, ids[key])):
            # The record keeps its derived id (stored nowhere): an old id may be another agent's now.
            forgotten.add(ids[key])
    return ids, forgotten


def _kept_as(engram: Engram, plan: Plan, records: list[tuple[RecordKey, Record]]) -> dict[RecordKey, str]:
    """The memory each of ``records`` (by its key) an earlier import made, found by the source id
    it keeps in the source's metadata entry (``metadata[entry][record.kept_as]``), in the record's
    agent, of the plan's source: an import before a record's id stopped holding its time
    (``imported_ids``' timed ids) gave an id holding the creation time then, which the source may
    have moved since (sclaw replaces a fact without a time; mcp-memory-service's
    ``preserve_timestamps=False``), so no id an import would give names it now. Asked of the store
    as a metadata condition, once per agent and entry key for a chunk of source ids; a record
    none of whose memories is there is left to be imported (the second copy it was before)."""
    entry = plan.entry or plan.kind
    wanted: dict[tuple[str, str], dict[str, RecordKey]] = {}
    for key, record in records:
        wanted.setdefault((key[1], record.kept_as or ""), {})[record.source_id] = key
    found: dict[RecordKey, str] = {}
    for (agent, kept_as), by_source in wanted.items():
        sources = list(by_source)
        for start in range(0, len(sources), _KEPT_AS_CHUNK):
            chunk = tuple(sources[start:start + _KEPT_AS_CHUNK])
            filt = MemoryFilter(scopes=(make_scope(agent, None),), where=Compare(entry, "in", chunk, within=(kept_as,)))
            for memory in engram.store.list(filt, limit=len(chunk) * 2):
                kept = memory.metadata.get(entry)
                source_id = kept.get(kept_as) if isinstance(kept, Mapping) else None
                if memory.source == plan.source and source_id in by_source:
                    found.setdefault(by_source[source_id], memory.id)
    return found


def _undated(engram: Engram, kind: str, records: list[tuple[RecordKey, Record]]) -> dict[RecordKey, str]:
    """The memory each of ``records`` (by its key; none found by its own ids) an earlier import made
    when the source gave it no time, whose id then held none (``Record.undated_as``: a basic-memory
    note without ``created`` in its front matter, dated by its file, and its observations), the
    record having one now: the note dated since is the same note, not a second copy. A note's
    date-less memory is that note when the note's time now is no later than the memory's (the
    file's time the import dated it by) and ``_UNDATED_LEEWAY_S``: the note it holds was there by
    then, so one created after it is a new note written at the same path (as two dated notes at
    one path are two, by the time in their ids). An observation's is it only when its note's
    date-less memory is that note: it follows its note, never joins another's."""
    wanted = [(key, record) for key, record in records
              if record.time_in_id and record.created_at is not None]  # (a record dated by its file has the date-less id itself)
    if not wanted:
        return {}
    # The id the date-less import gave, and the one imports before 2026-11 gave (every agent alike).
    undated = {key: (record_id(kind, key[0], None, key[1]), record_id(kind, key[0], None)) for key, _ in wanted}
    stored = {m.id: m for m in engram.store.get_many(sorted({i for pair in undated.values() for i in pair}))}

    def held(key: RecordKey) -> Memory | None:
        return next((stored[i] for i in undated[key] if i in stored and stored[i].scope.agent == key[1]), None)

    same: set[RecordKey] = set()  # the notes (by source id and agent) their date-less memory is
    for key, record in wanted:
        memory = held(key)
        if record.undated_as == record.source_id and memory is not None and (
                record.created_at is not None and record.created_at <= memory.created_at + _UNDATED_LEEWAY_S):
            same.add(key)
    found: dict[RecordKey, str] = {}
    for key, record in wanted:
        memory = held(key)
        if memory is not None and (record.undated_as or "", key[1]) in same:
            found[key] = memory.id
    return found


# How much later than the file's time that dated a note's date-less memory the note's own
# ``created`` may be and still be that note's: a time written without a zone is read as UTC and a
# date alone as its midnight, so a creation written in a person's local time may read up to 14
# hours after the instant it names; a day covers either.
_UNDATED_LEEWAY_S = 86400.0


# Source ids asked of the store at once by ``_kept_as``: well under SQLite's bound on a statement's parameters.
_KEPT_AS_CHUNK = 400


def imported_ids(kind: str, record: Record, agent: str) -> list[str]:
    """The ids a memory an import of ``record`` into ``agent`` made may have, in the order ``_ids``
    prefers them: the engram id engram's exports carry (when the record has one), the id imports
    before 2026-11 gave (one for every agent), the ids holding the record's time an import gave
    before its id stopped holding it (``Record.time_in_id``), and last the id derived from the
    source identity and ``agent``, which a new import gives."""
    in_id = record.created_at if record.time_in_id else None
    legacy = record_id(kind, record.source_id, in_id)
    # A record whose id no longer holds its time (``time_in_id`` False: mcp-memory-service's and
    # sclaw's, whose sources may move a record's creation under the same id) may have been imported
    # with it by an earlier build: those ids are its memory too, so a re-run still skips it.
    timed = ([record_id(kind, record.source_id, record.created_at), record_id(kind, record.source_id, record.created_at, agent)]
             if not record.time_in_id and record.created_at is not None else [])
    return [i for i in (record.engram_id, legacy, *timed) if i] + [record_id(kind, record.source_id, in_id, agent)]


def _links(plan: Plan, ids: dict[RecordKey, str]) -> dict[str, list[str]]:
    """The links between memories: a link of two source records joins each memory of the first to
    the second's memory in the same agent, or else to the second's memory wherever it is."""
    found: dict[str, dict[str, str]] = {}  # source id -> agent -> memory id
    for (source_id, agent), memory_id in ids.items():
        found.setdefault(source_id, {})[agent] = memory_id
    links: dict[str, list[str]] = {}
    for a, b in plan.links:
        others = found.get(b, {})
        for agent, one in found.get(a, {}).items():
            other = others.get(agent, next(iter(others.values()), None))
            if other is not None and other != one:
                links.setdefault(one, []).append(other)
    return links


def _memories(engram: Engram, target: Engram, plan: Plan, records: list[Record], keep_agents: bool, now: float,
              own: str, by_source: dict[str, Record],
              too_long: list[tuple[Record, int]]) -> tuple[list[Memory], dict[str, Record], set[str], list[str]]:
    """Each of ``records``' memory (of ``plan``, imported by ``engram`` into the database
    ``target`` stands on), as a first import would store it (a forgotten one too: every record is
    checked); the record each memory comes from (by memory id); the ids of those their agent forgot
    since an earlier import (``target``'s trail); warnings.
    ``by_source`` (the records seen so far by source id, across every database an import writes
    into) and ``too_long`` (the records over ``max_content_chars``) are filled in. A link joins
    memories of these records only: with one database per agent, another agent's memory is in
    another file."""
    agents = {id(r): _agent(r, own, keep_agents) for r in records}
    ids, forgotten = _ids(target, plan, records, agents)
    links = _links(plan, ids)
    out: dict[str, Memory] = {}
    first: dict[str, Record] = {}  # by memory id
    warnings: list[str] = []
    for record in records:
        # An id the source gives is one record, whichever agent has it.
        if by_source.setdefault(record.source_id, record) is not record:
            _same_record(by_source[record.source_id], record)
        memory_id = ids[_key(record, agents)]
        if memory_id in out:  # the same fact twice in one source: one memory
            _same_record(first[memory_id], record)
            continue
        first[memory_id] = record
        try:
            memory, found = _memory(engram, record, memory_id, plan, agents[id(record)], keep_agents, now)
        except _TooLong as exc:
            too_long.append((record, exc.length))
            continue
        warnings += [f"{record.where}: {w}" for w in found]
        out[memory_id] = replace(memory, links=tuple(dict.fromkeys(links.get(memory_id, ()))))
    return list(out.values()), first, forgotten, warnings


def _forgotten_warning(memories: list[Memory], own: str) -> str:
    """How many records were not imported as forgotten, where the trail lists them, and the way back."""
    agents = sorted({m.scope.agent or own for m in memories})
    where = "" if agents == [own] else f"-a {agents[0]} "
    more = f" (and agent{'s' if len(agents) > 2 else ''} {', '.join(agents[1:4])}{', ...' if len(agents) > 4 else ''})" \
        if len(agents) > 1 else ""
    n = len(memories)
    return (f"{n} {'memory was' if n == 1 else 'memories were'} forgotten in engram since an earlier import and "
            f"{'is' if n == 1 else 'are'} not imported again: engram {where}audit --action forgotten lists "
            f"{'it' if n == 1 else 'them'} with {'its' if n == 1 else 'their'} content{more}; "
            "engram remember brings one back")


class _TooLong(Exception):
    def __init__(self, length: int) -> None:
        super().__init__(length)
        self.length = length


def _too_long(found: list[tuple[Record, int]], limit: int) -> SnapshotError:
    """One error naming every record longer than ``max_content_chars`` and the value that admits
    them all: what a migrating user needs to fix it in one step (a Letta block may hold 20000
    characters, engram's default is 8000). Refusing keeps the import all or nothing; cutting the
    text would lose what the source held, splitting it would invent boundaries."""

    def named(record: Record) -> str:
        return record.where + record.fields.get("content", ".content")

    record, length = found[0]
    others = [f"{named(r)} ({f'{r.what}, ' if r.what else ''}{n} characters)" for r, n in found[1:6]]
    more = f"; {len(found) - 1} more too long: {', '.join(others)}{', ...' if len(found) > 6 else ''}" if others else ""
    need = max(n for _, n in found)
    return SnapshotError(named(record), f"{f'{record.what} ' if record.what else ''}is {length} characters; the maximum "
                         f"is {limit}{more}",
                         f"raise max_content_chars to {need} or more (ENGRAM_MAX_CONTENT_CHARS={need}, or "
                         f"max_content_chars = {need} in engram's config file) and import again; nothing was imported")


def _same_record(first: Record, again: Record) -> None:
    """A source id the source gave twice must name the same record both times: two different
    records under one id would otherwise lose one of them silently."""
    if again.id_field is None or replace(again, where=first.where) == first:
        return
    shown = "" if again.id_field == "content" else f"{jsondoc.shown(again.source_id)} "
    raise SnapshotError(f"{again.where}.{again.id_field}", f"{shown}repeats {first.where}, which differs",
                        f"its own {again.id_field}, or an identical copy of that record")


def _memory(engram: Engram, record: Record, memory_id: str, plan: Plan, agent: str, keep_agents: bool,
            now: float) -> tuple[Memory, list[str]]:
    try:
        content, found = engram.privacy.screen(record.content)
        if len(content) > engram.max_content_chars:
            raise _TooLong(len(content))
        content = parse_content(content, engram.max_content_chars)
        scope = make_scope(agent, record.session if keep_agents and record.agent else None)
        key = parse_key(record.key or key_from_content(content))
        # As ``remember`` reads it: a source's entity name of 300 characters was stored, and a
        # memory folder synced from the store could not be read back (it holds up to 200).
        related_entity = parse_short_text("related_entity", record.related_entity)
        search_context = parse_search_context(record.search_context, engram.max_content_chars)
    except ValidationError as exc:
        raise SnapshotError(record.where + record.fields.get(exc.field, f".{exc.field}"), exc.problem,
                            exc.allowed) from None
    created, updated, dated = _imported_times(record, now)
    valid_from = imported_valid_from(engram, record, content)
    try:
        metadata, in_metadata = engram.privacy.screen_metadata(dict(record.metadata))
    except ValidationError as exc:  # two names redacted into one
        raise SnapshotError(record.where + record.fields.get("metadata", ".metadata") + exc.field.removeprefix("metadata"),
                            exc.problem, exc.allowed) from None
    found = [*found, *in_metadata, *dated]
    if record.refresh:  # what this import brings, for the next one to tell it from an edit in engram (_changes)
        metadata = with_imported(metadata, record, plan.entry or plan.kind, content)
    return Memory(
        id=memory_id, key=key, content=content, category=record.category, type=record.type,
        layer=layer_for_type(record.type), tags=record.tags, metadata=metadata,
        importance=record.importance, related_entity=related_entity, search_context=search_context,
        source=plan.source, scope=scope,
        created_at=created, updated_at=updated, last_accessed=record.last_accessed,
        valid_from=valid_from, valid_until=record.valid_until,
    ), found


def _imported_times(record: Record, now: float) -> tuple[float, float, list[str]]:
    """The creation and update times an import gives ``record``'s new memory, by the rule every door
    bringing memories in follows (``record_times``: never created after its own last change), and its
    warning, naming the fields as the source spells them. The change time is kept as given (the one a
    re-import of a ``refresh`` record is compared with). The record itself is left as read: its
    ``created_at`` is part of its id (``imported_ids``), which must not move."""
    names = (record.fields.get("created_at", "created_at").strip(" ."), record.fields.get("updated_at", "updated_at").strip(" ."))
    created, updated, warning = record_times(record.created_at, record.updated_at, now, names)
    warnings = [] if warning is None else [warning]
    # Kept as given, as every importer keeps a source's times (a time past any date engram can show
    # is refused when read: ``base.timestamp``); but a record time later than now (a Zep node made
    # in the year 3000) is a source's error more likely than not, and the memory then stays new to
    # retention, hygiene and decay until that time: named, so the person can look at the source.
    ahead = [f"{name} {shown_time(at)}" for name, at in zip(names, (record.created_at, record.updated_at), strict=True)
             if at is not None and at > now + CREATED_AT_LEEWAY_S]
    if ahead:
        warnings.append(f"{' and '.join(ahead)} {'is' if len(ahead) == 1 else 'are'} later than now: kept as the source "
                        "gives it (remember would refuse it; retention, hygiene and decay count the memory as new until "
                        "then)")
    return created, updated, warnings


def imported_valid_from(engram: Engram, record: Record, content: str) -> float | None:
    """The start of the valid time an import gives ``record``'s memory holding ``content`` (as
    stored): the source's own wins; else "On 2025-03-10 ..." says when it happened, as in remember,
    unless that falls after the end the source gives (a date the text mentions)."""
    if record.valid_from is not None:
        return record.valid_from
    stated = engram.time.stated(content)
    return stated if stated is None or record.valid_until is None or stated <= record.valid_until else None


@dataclass(frozen=True, slots=True)
class _Change:
    """What a re-import brings to a memory an earlier import made: ``update``'s keyword arguments."""

    memory: Memory  # as stored
    fields: dict[str, Any]


# Where a ``refresh`` record's memory keeps, inside the source's own entry (``metadata[kind]``: Zep's
# ``metadata["zep"]``), the SHA-256 of the text the last import brought to it. A digest, not the
# text: the content can be thousands of characters, and only equality is asked.
IMPORTED_TEXT = "imported_text_sha256"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _with_text(metadata: Mapping[str, Any], kind: str, digest: str | None) -> dict[str, Any]:
    """``metadata`` whose source entry records ``digest`` as the text an import brought (None: none)."""
    entry = {k: v for k, v in dict(metadata.get(kind) or {}).items() if k != IMPORTED_TEXT}
    return {**metadata, kind: entry if digest is None else {**entry, IMPORTED_TEXT: digest}}


def _imported_text(memory: Memory, kind: str) -> str | None:
    entry = memory.metadata.get(kind)
    found = entry.get(IMPORTED_TEXT) if isinstance(entry, Mapping) else None
    return found if isinstance(found, str) else None


# Beside it, for a source that dates its changes (mem0, whose categories become tags): the tags the
# last import brought, in the source's order, so a refresh replaces those and keeps the ones a person
# added in engram since (``refreshed_tags``). The tags themselves: a handful of short names, and the
# refresh needs to know which ones, not only whether they changed.
IMPORTED_TAGS = "imported_tags"


def _with_tags(metadata: Mapping[str, Any], kind: str, tags: tuple[str, ...]) -> dict[str, Any]:
    """``metadata`` whose source entry records ``tags`` as the tags an import brought."""
    return {**metadata, kind: {**dict(metadata.get(kind) or {}), IMPORTED_TAGS: list(tags)}}


def _imported_tags(memory: Memory, kind: str) -> tuple[str, ...] | None:
    entry = memory.metadata.get(kind)
    found = entry.get(IMPORTED_TAGS) if isinstance(entry, Mapping) else None
    return tuple(found) if isinstance(found, list) and all(isinstance(t, str) for t in found) else None


# Beside them, for a source that dates its changes: the metadata keys the last import brought (the
# source's entry aside), so a refresh removes those the source no longer gives and keeps the ones a
# person added in engram since (``_changes``). A memory imported before they were kept loses none.
IMPORTED_KEYS = "imported_keys"


def _imported_keys(memory: Memory, kind: str) -> tuple[str, ...] | None:
    found = _entry_value(memory, kind, IMPORTED_KEYS)
    return tuple(found) if isinstance(found, list) and all(isinstance(k, str) for k in found) else None


def _entry_value(memory: Memory, kind: str, name: str) -> Any:
    """What the source's entry of ``memory``'s metadata (``metadata[kind]``) holds under ``name``, or None."""
    entry = memory.metadata.get(kind)
    return entry.get(name) if isinstance(entry, Mapping) else None


def with_imported(metadata: Mapping[str, Any], record: Record, kind: str, content: str) -> dict[str, Any]:
    """``metadata`` (the record's, as stored) with what importing ``record`` brings recorded in the
    source's entry, for the next import to tell it from a change made in engram (``_changes``): the
    digest of ``content`` (its text as stored) and, for a source that dates its changes, its tags
    and metadata keys. Every import of a ``refresh`` record writes it, a first one or a refresh:
    ``engram import`` here, the mem0 facade's ``import_mem0`` when it brings a newer item itself, so
    either door reads what the other wrote."""
    metadata = _with_text(metadata, kind, _digest(content))
    if record.changed_at is None:
        return metadata
    metadata = _with_tags(metadata, kind, record.tags)
    return {**metadata, kind: {**metadata[kind], IMPORTED_KEYS: sorted(k for k in metadata if k != kind)}}


def refreshed_tags(held: Memory, record: Record, brought: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """The tags of ``held`` once ``record``, newer, brings ``brought``: the source's, in its order,
    then the memory's own (those the last import did not bring), in theirs. A tag the source no
    longer gives is dropped; one a person added in engram stays. A memory an import made before the
    tags it brought were kept (no ``IMPORTED_TAGS``) takes the source's alone, as every refresh did
    then: which of its tags a person added is not known, and keeping them all would keep every
    category the source dropped as if a person had chosen it, from then on. The mem0 facade's
    ``import_mem0`` asks it too, when it brings a newer item itself.

    Raises ``SnapshotError`` naming the record's field (``results[0].categories``) when both
    together pass ``MAX_TAGS``, each side within it: checked here, so both doors name the item."""
    before = _imported_tags(held, kind)
    tags = brought if before is None else (*brought, *(t for t in held.tags if t not in before and t not in brought))
    if len(tags) > MAX_TAGS:
        own = len(tags) - len(brought)
        raise SnapshotError(record.where + record.fields.get("tags", ".tags"),
                            f"with the {own} tags added in engram to memory {held.key}, has {len(tags)} "
                            "different tags", f"{TAGS_ALLOWED}: engram update {held.key} --tags with fewer, "
                            "and import again; nothing was imported")
    return tags


def newer_than(record: Record, memory: Memory) -> bool:
    """Whether the source changed ``record`` after ``memory`` last changed (its import, a refresh,
    or an edit in engram): the record's ``changed_at`` is later than the memory's update time. A
    record that gives no time is not newer. The mem0 facade's ``import_mem0`` asks it too."""
    return record.changed_at is not None and record.changed_at > memory.updated_at


def _changes(engram: Engram, kind: str, memories: list[Memory], records: dict[str, Record],
             existing: dict[str, Memory], warnings: list[str]) -> list[_Change]:
    """What each ``refresh`` record the store already holds brings over, checked before anything is
    written.

    The text follows the source's when the memory's text is still the one the last import brought:
    its SHA-256 is the one the memory keeps at ``metadata[kind][IMPORTED_TEXT]`` (set by every
    import that brings a text). That digest, rather than "the memory has no earlier versions", is
    the rule because a re-import that brought the source's rewrite made a version itself, and a
    second rewrite must follow as the first did; and rather than the versions' times or the audit
    trail, because it needs no trail (``lifecycle.audit`` may be off) and says exactly what is
    asked: whether engram holds what the source last gave. A text changed in engram since is kept
    and named in a warning when the source changed its text too (the digest then stays the one of
    the text the memory took from an import). A memory an import made before the digest was kept
    holds the import's text while it has no earlier version.

    A record the source dates (``changed_at``: mem0's or mcp-memory-service's ``updated_at``) brings nothing unless it is
    newer than the memory (``newer_than``): importing the same export again, or an older one, changes
    nothing, and an edit in engram after the source's change is the latest word. A newer one also
    brings its tags (mem0's categories) in place of those the last import brought, kept at
    ``metadata[kind][IMPORTED_TAGS]``: a tag added in engram since stays (``refreshed_tags``); it
    removes the metadata keys the last import brought (``IMPORTED_KEYS``) that it no longer gives, a
    key added in engram staying; its type, when the source's own type word changed
    (``Record.type_kept_as``: mcp-memory-service's ``memory_type``); and the related entity and
    search context it carries (a mem0 item's ``engram`` entry), one it carries none of left as set
    in engram.

    The record's metadata is the source's own record of it (Zep's ids and times at
    ``metadata["zep"]``, the digest included): when it differs from the memory's at those keys, the
    source changed the record since, and its metadata there and the valid time it gives (a start or
    end it no longer gives is kept, never cleared) are brought over. Otherwise the valid time is
    left as it stands, so an end set in engram (``update --valid-until``, ``supersede``) survives a
    newer dump that changed nothing."""
    out = []
    for memory in memories:
        record, held = records[memory.id], existing.get(memory.id)
        if held is None:
            continue
        if not record.refresh or (record.changed_at is not None and not newer_than(record, held)):
            # Nothing newer; but a memory an older build imported without the keys the source's
            # layout keeps at the top of the metadata (``Record.placed``) takes them, and nothing else
            # (only one the source brought: an item engram's own export wrote is never a refresh).
            missing = {k: v for k, v in record.placed.items() if k not in held.metadata}
            if missing and record.refresh and held.source == memory.source:
                out.append(_Change(held, {"metadata": {**held.metadata, **missing}}))
            continue
        fields: dict[str, Any] = {}
        theirs: Mapping[str, Any] = memory.metadata
        if memory.content != held.content:
            brought = _imported_text(held, kind)
            if brought is None:  # imported before the digest was kept
                imports = not engram.store.versions(held.id)
            else:
                imports = _digest(held.content) == brought
            if imports:
                fields["content"] = memory.content
            else:
                theirs = _with_text(theirs, kind, brought)  # the memory's text is still not an import's
                if brought is None or _digest(memory.content) != brought:  # the source rewrote it since
                    warnings.append(f"{record.where}: the source's new text not brought over: memory {held.key}'s "
                                    "was changed in engram since it was imported, and is kept (engram versions "
                                    f"{held.key} lists its earlier texts)")
        # A key the last import brought that the newer record no longer gives was removed in the
        # source (dated sources only, which record the keys they brought: ``IMPORTED_KEYS``); a key
        # added in engram stays, as a tag does.
        dropped = set(_imported_keys(held, kind) or ()) - set(memory.metadata) if record.changed_at is not None else set()
        metadata = {**{k: v for k, v in held.metadata.items() if k not in dropped}, **theirs}
        if metadata != held.metadata:
            fields["metadata"] = metadata
            for name, given in (("valid_from", record.valid_from), ("valid_until", record.valid_until)):
                if given is not None and getattr(memory, name) != getattr(held, name):
                    fields[name] = getattr(memory, name)
        # A source that dates its changes (mem0, mcp-memory-service) changed the record after the memory's last change
        # (in engram too): its tags (mem0's categories) are the latest word on the tags it brought,
        # a tag added in engram stays (refreshed_tags). Zep's are not dated, so its tags stay as they are.
        if record.changed_at is not None:
            # Its type too, when the source changed it (the source's own type word, kept in its entry,
            # differs): a type set in engram on a memory whose type the source left alone stays.
            if record.type_kept_as and memory.type != held.type and (
                    _entry_value(memory, kind, record.type_kept_as) != _entry_value(held, kind, record.type_kept_as)):
                fields["type"] = memory.type
            # engram's own fields, when the record carries them (a mem0 item's ``engram`` entry): the
            # source's latest word, as its tags are. One it carries none of stays as set in engram (the
            # source has no such field), as a metadata key added in engram stays.
            for name in ("related_entity", "search_context"):
                if getattr(record, name) is not None and getattr(memory, name) != getattr(held, name):
                    fields[name] = getattr(memory, name)
            tags = refreshed_tags(held, record, memory.tags, kind)
            if tags != held.tags:
                fields["tags"] = tags
        start, end = fields.get("valid_from", held.valid_from), fields.get("valid_until", held.valid_until)
        if start is not None and end is not None and end < start:
            raise SnapshotError(record.where + record.fields.get("valid_until", ".valid_until"),
                                f"ends before the valid_from of memory {held.key} in engram",
                                f"an end at or after it, or engram update {held.key} --valid-from, and import "
                                "again; nothing was imported")
        if fields:
            out.append(_Change(held, fields))
    return out


def _refreshing(engram: Engram, changes: list[_Change]) -> list[tuple[Memory, PendingWrite]]:
    """Each of ``changes`` made the write ``update`` makes (versions kept, events announced once
    committed, a new text embedded after), in the view of the memory's own agent, checked before
    anything is written; the import writes them in its own transaction (``ImportUpdate``)."""
    own = engram.scope
    out = []
    for change in changes:
        scope = change.memory.scope
        view = engram if scope == own or scope.agent is None else engram.for_agent(scope.agent, scope.session)
        out.append((change.memory, view._updating(change.memory, change.fields)))
    return out


def _announce_updates(engram: Engram, changes: list[tuple[Memory, PendingWrite]]) -> None:
    """The committed updates' events, as ``update`` announces them (each memory as it was read and
    as it is now); one read for them all."""
    if not changes:
        return
    now = {m.id: m for m in engram.store.get_many([held.id for held, _ in changes])}
    done = [(write, WriteResult(now[held.id], "updated", previous=held)) for held, write in changes if held.id in now]
    announce([write for write, _ in done], [result for _, result in done])


def _unique_keys(engram: Engram, memories: list[Memory]) -> list[Memory]:
    """Suffix keys that another memory in the same scope (stored, or earlier in this import) holds:
    the lowest suffix free of both.

    The walk for a proposed key resumes at the suffix it last handed out in this import: every one
    below it was taken then and still is (the keys handed out only grow during an import, and the
    stored ones are looked up once). Walking from ``-2`` for each record made a templated import
    quadratic (3,000 records proposing one key: ~4.5 million checks, and every stored suffix looked
    up again per record). The keys are the ones that walk gave: the lowest free suffix. A store's
    ``free_key`` gives the same one unless a suffix past ``-16`` was freed (it may pass such a gap
    over); an import keeps the lowest, as it always has."""
    taken: dict[Scope, set[str]] = {}
    walked: dict[tuple[Scope, str], int] = {}  # per scope and proposed key, the suffix last handed out
    out = []
    for memory in memories:
        used = taken.setdefault(memory.scope, set())
        n = walked.get((memory.scope, memory.key), 1)
        key = memory.key if n == 1 else f"{memory.key[:190]}-{n}"
        while key in used or _stored_key(engram, memory.scope, key):
            n += 1
            key = f"{memory.key[:190]}-{n}"
        used.add(key)
        walked[(memory.scope, memory.key)] = n
        out.append(memory if key == memory.key else replace(memory, key=key))
    return out


def _stored_key(engram: Engram, scope: Scope, key: str) -> bool:
    return engram.store.get(key, make_filter((scope,), include_superseded=True)) is not None


Conversation = tuple[str, str]  # (agent, key): history is per agent


def _messages(plan: Plan, own: str, keep_agents: bool, now: float) -> list[tuple[Conversation, Message, str]]:
    """Each message with the conversation it joins (the source agent's, Letta's agent, when it
    names one and ``keep_agents``, else the importing agent's) and its place in the source. Its time
    is read against ``now`` as the history's append reads it, so a time the append would refuse
    (later than now) stops the import before its first write, not after its memories were stored."""
    out = []
    for entry in plan.history:
        try:
            message = make_message(entry.role, entry.content, tool_calls=entry.tool_calls,
                                   tool_call_id=entry.tool_call_id, metadata=dict(entry.metadata),
                                   created_at=entry.created_at, now=now)
        except ValidationError as exc:
            raise SnapshotError(f"{entry.where}{_spelt(exc.field, [entry])}", exc.problem, exc.allowed) from None
        agent = entry.agent if keep_agents and entry.agent else own
        out.append(((agent, entry.conversation), message, entry.where))
    return out


def _by_place(entries: Sequence[HistoryEntry]) -> dict[str, list[HistoryEntry]]:
    """The messages read at each place of the source (a Clawless line: its two)."""
    placed: dict[str, list[HistoryEntry]] = {}
    for entry in entries:
        placed.setdefault(entry.where, []).append(entry)
    return placed


def _spelt(field: str, entries: Sequence[HistoryEntry]) -> str:
    """A message field (``created_at``, ``tool_calls[0].id``) as the source file spells it, to append
    to the message's place: by each entry's ``fields`` (ChatGPT's ``.create_time``, Clawless's
    ``.timestamp``), else as engram's. ``entries`` are the messages read at that place: a Clawless
    line holds two, whose texts it spells apart (``user_message``, ``bot_response``), and a field
    the error cannot tell between them is named both ways."""
    head = re.split(r"[.\[]", field, maxsplit=1)[0]
    spellings = dict.fromkeys(entry.fields.get(head, f".{head}") for entry in entries) or {f".{head}": None}
    return " or ".join(spelt + field[len(head):] for spelt in spellings)


def _respelt(exc: ValidationError, places: Sequence[str], entries: Mapping[str, list[HistoryEntry]]) -> ValidationError:
    """``exc`` (the history's, naming ``<place>.<field>``) with the field as the source spells it."""
    named = [where for where in places if where in entries and exc.field.startswith(f"{where}.")]
    if not named:
        return exc
    where = max(named, key=len)  # the message's own place, should one place begin another's
    return SnapshotError(f"{where}{_spelt(exc.field.removeprefix(f'{where}.'), entries[where])}", exc.problem,
                         exc.allowed)


def _mark(message: Message) -> tuple[str, str, float, str | None]:
    # The tool call a result answers is part of it: two parallel calls' results often have the
    # same text at the same instant ("ok"), and are two messages.
    return message.role.value, message.content, message.created_at, message.tool_call_id


# Each conversation's new messages, screened for PII once (``History.screen``): each as it is to be
# stored, with its PII warnings and its place in the source.
_Batches = dict[Conversation, list[tuple[Message, tuple[str, ...], str]]]


def _screened(batch: list[tuple[Message, tuple[str, ...], str]]) -> Screened:
    from engram.history.service import Screened

    return Screened(tuple(m for m, _, _ in batch), tuple(found for _, found, _ in batch))


def _history_batches(engram: Engram, messages: list[tuple[Conversation, Message, str]],
                     entries: Mapping[str, list[HistoryEntry]],
                     stored: Callable[[str], History | None]) -> tuple[_Batches, int]:
    """The messages each conversation does not hold yet, checked as its append will check them
    (``History.check_many``: PII screening, a tool result's call in the conversation or earlier in
    the batch), before the import's first write; and how many it holds already. Each message is
    screened once, here (``History.screen``): its text as stored tells whether the conversation
    holds it, and the check and the append take it screened. A refusal is the history's error with
    the message's place in the source (``_respelt``).
    A message the source repeats (the same text, role and time) is new as often as the source has
    it, and a second import finds each copy. ``stored``: each agent's history as stored."""
    batches: _Batches = {}
    held: dict[Conversation, Counter[tuple[str, str, float, str | None]]] = {}
    newest: dict[Conversation, float] = {}
    present = 0
    for conversation, message, where in messages:
        history = stored(conversation[0])
        if conversation not in held:
            # From the store: what the conversation holds, without the hint an empty read of the
            # history gives (Clawless's file unread), which this import is bringing in.
            kept = [] if history is None else history.store.get_all(normal_key(conversation[1]))
            held[conversation] = Counter(_mark(m) for m in kept)
            newest[conversation] = max((m.created_at for m in kept), default=float("-inf"))
            batches[conversation] = []
        # Known by the text as stored: a message redacted by ``privacy.pii`` is the one the source has.
        try:
            # (an agent with no database yet: the engine's policy, which its history is made with)
            screened = (engram.history if history is None else history).screen([message], names=[where])
        except ValidationError as exc:  # two ids or names redacted into one, a text too long as redacted
            raise _respelt(exc, [where], entries) from None
        mark = _mark(screened.messages[0])
        # History is append-only in time: what is older than the conversation's newest message was
        # imported before (and may since have been trimmed away), so it is not appended again.
        if held[conversation][mark] > 0:
            held[conversation][mark] -= 1  # each copy the conversation holds stands for one the source has
            present += 1
        elif message.created_at < newest[conversation]:
            present += 1
        else:
            batches[conversation].append((screened.messages[0], screened.warnings[0], where))
    for (agent, key), batch in batches.items():
        if not batch:
            continue
        history = stored(agent)
        names = [where for _, _, where in batch]
        try:
            if history is None:  # an agent with no database yet holds no conversation: the engine's rule, against none
                engram.history.check_many(key, _screened(batch), names=names, held=())
            else:
                history.check_many(key, _screened(batch), names=names)
        except ValidationError as exc:  # a message's field named as the source spells it (``entries``)
            raise _respelt(exc, names, entries) from None
    return batches, present


def _append_history(engram: Engram, batches: _Batches, present: int, total: int, report: Progress,
                    warnings: list[str], entries: Mapping[str, list[HistoryEntry]],
                    ) -> tuple[int, dict[Conversation, int]]:
    """Append each conversation's new messages (``_history_batches``: screened and checked already)
    in one batch (``History.append_screened``); returns (added and kept, added and kept per
    conversation). A failed write leaves none of that conversation's new messages and raises. A
    conversation that changed since the check so that its append refuses a message (a tool call
    its result answers undone, trimmed or purged meanwhile) gets none of its new messages either,
    and is reported in a warning naming the message's place in the source and the reason, while
    the import goes on: raised here, after the memories and earlier conversations were written, the
    refusal read as the check's, which stores nothing. What the conversation's length limit trimmed
    away again at once is not counted as added, and is reported. ``present`` of the ``total``
    messages the conversations held already."""
    if not total:
        return 0, {}
    own = engram.scope.agent or "default"
    history_of = _histories(engram)
    done = present
    report("history", done, total)
    added = 0
    gained: dict[Conversation, int] = {}
    # Newest conversations first: a full semantic index of exchanges then skips embedding the older
    # ones it would prune at once (ExchangeIndex.add), rather than embedding a whole export.
    for (agent, key), batch in sorted(batches.items(), key=lambda kv: max((m.created_at for m, _, _ in kv[1]),
                                                                          default=0.0), reverse=True):
        if not batch:
            continue
        history = history_of(agent)
        whose = "" if agent == own else f" (agent {agent})"
        names = [where for _, _, where in batch]
        try:
            appended = history.append_screened(key, _screened(batch), names=names)
        except ValidationError as exc:  # a message's field named as the source spells it (``entries``)
            refused = _respelt(exc, names, entries)
            warnings.append(f"{shown_key(key)}{whose}: {counted(len(batch), 'new message')} not imported: the conversation "
                            f"changed during the import and its append refused {refused} (none of them was appended; "
                            "importing again checks them against the conversation as it is)")
            done += len(batch)
            report("history", done, total)
            continue
        warnings += appended.warnings
        done += len(batch)
        report("history", done, total)
        marks = Counter(_mark(m) for m in appended.messages)
        kept_now = Counter(_mark(m) for m in history.all(key))
        kept = sum(min(count, kept_now[mark]) for mark, count in marks.items())
        added += kept
        gained[(agent, key)] = kept
        if kept < marks.total():
            bound = (f"a conversation holds at most history.max_history_len ({history.max_history_len}) messages" if history.trims
                     else "a jsonl history keeps at most history.max_entries exchanges per agent")
            warnings.append(f"{shown_key(key)}{whose}: {counted(marks.total() - kept, 'older message')} not kept: {bound}")
    return added, gained


def _stored_histories(engram: Engram) -> Callable[[str], History | None]:
    """Each agent's history as stored, by its name, to read and check against before the import's
    first write: None for an agent whose database is not made yet (one database per agent), which
    holds nothing; opened to read (``for_agent(reading=True)``), so a refused import makes none."""
    own = engram.scope.agent or "default"
    histories: dict[str, History | None] = {}

    def stored(agent: str) -> History | None:
        if agent not in histories:
            view = engram if agent == own else engram.for_agent(agent, reading=True)
            histories[agent] = None if not_made_yet(view) else view.history
        return histories[agent]

    return stored


def _histories(engram: Engram) -> Callable[[str], History]:
    """The history of an agent by its name, each opened once."""
    own = engram.scope.agent or "default"
    histories: dict[str, History] = {}

    def history_of(agent: str) -> History:
        if agent not in histories:
            histories[agent] = engram.history if agent == own else engram.for_agent(agent).history
        return histories[agent]

    return history_of


def _summaries(plan: Plan, own: str, keep_agents: bool) -> list[tuple[Conversation, HistorySummary]]:
    """Each summary, checked, with the conversation it belongs to: the source agent's (a Letta
    agent's) when it names one and ``keep_agents``, else the importing agent's."""
    out = []
    for summary in plan.summaries:
        try:
            checked = replace(summary, conversation=normal_key(summary.conversation), text=check_summary(summary.text))
        except ValidationError as exc:
            raise SnapshotError(f"{summary.where}.{exc.field}", exc.problem, exc.allowed) from None
        out.append(((summary.agent if keep_agents and summary.agent else own, checked.conversation), checked))
    return out


def _check_summaries(engram: Engram, summaries: list[tuple[Conversation, HistorySummary]],
                     stored: Callable[[str], History | None]) -> None:
    """Refuse, before the import's first write, a summary ``_set_summaries`` would set (the first
    of a conversation that has none) and the history refuse (``History.checked_summary``: two of
    its JSON names redaction makes one, or longer than a message once redacted), as ``_summaries``
    names a summary's field."""
    seen: set[Conversation] = set()
    for (agent, key), summary in summaries:
        if (agent, key) in seen:
            continue
        seen.add((agent, key))
        history = stored(agent)
        if history is not None and history.summary(key):
            continue  # kept, never replaced (``_set_summaries``)
        try:
            (engram.history if history is None else history).checked_summary(summary.text)
        except ValidationError as exc:
            raise SnapshotError(f"{summary.where}.{exc.field}", exc.problem, exc.allowed) from None


def _set_summaries(engram: Engram, summaries: list[tuple[Conversation, HistorySummary]],
                   warnings: list[str]) -> tuple[int, int]:
    """Set each conversation's summary when it has none; one it already holds is kept, never
    replaced (it may be engram's own compaction since): a different one is reported."""
    done = kept = 0
    own = engram.scope.agent or "default"
    history_of = _histories(engram)
    for (agent, key), summary in summaries:
        history = history_of(agent)
        held = history.summary(key)
        if not held:
            warnings += [f"{summary.where}: {warning}" for warning in history.set_summary(key, summary.text)]
            done += 1
            continue
        kept += 1
        try:
            differs = held != history.privacy.screen(summary.text, field="summary")[0]  # (as it would be stored)
        except ValidationError:  # (it could not be stored at all: two of its JSON names redacted into one)
            differs = True
        if differs:
            whose = "" if agent == own else f" (agent {agent})"
            warnings.append(f"{summary.where}: {shown_key(key)}{whose} already has another summary in engram, kept "
                            "(engram history summary KEY shows it)")
    return done, kept


def _notes_home(engram: Engram, plan: Plan, allowed: bool) -> Path | None:
    """The home whose ``MEMORY.md`` the plan's operator notes join, or None when they join none
    (the plan has none, the caller left them out, an engine without settings has no home)."""
    if plan.operator_notes is None or not allowed or engram.settings is None:
        return None
    return engram.settings.home


def _check_operator_notes(engram: Engram, plan: Plan, allowed: bool) -> None:
    """Refuse the import, before its first write, when the notes could not join ``MEMORY.md``
    (``memory_md.append_problem``): they are written last, after every memory and message, and a
    failure there would leave the import half done. The check creates no file: a missing one is
    made (from the template) when the notes are appended."""
    home = _notes_home(engram, plan, allowed)
    if home is None:
        return
    from engram.files.memory_md import append_problem, memory_md_path

    problem = append_problem(home)
    if problem is not None:
        raise ValidationError(str(memory_md_path(home)),
                              f"{problem}, and this {plan.source} import appends its operator notes to it: "
                              "nothing was imported",
                              "a UTF-8 text file engram can append to: fix it or move it away (a new one is made), "
                              "or import without the notes (engram import --into-agent, which also keeps everything "
                              "in this agent; operator_notes=False from Python)")


def _operator_notes(engram: Engram, plan: Plan, allowed: bool, warnings: list[str]) -> str:
    """Append the notes (``_check_operator_notes`` found the file fit before the first write); a
    failure now (the file changed since, a full disk) is a warning, as the rest is stored already."""
    home = _notes_home(engram, plan, allowed)
    if home is None or plan.operator_notes is None:
        return "none" if plan.operator_notes is None else "skipped"
    from engram.files.memory_md import add_notes

    try:
        added = add_notes(home, f"Imported from {plan.source}", plan.operator_notes)
    except StorageError as exc:
        warnings.append(f"operator notes not added to MEMORY.md: {exc}; the rest was imported (import again "
                        "once the file is fixed to add them, or paste them in by hand)")
        return "failed"
    return "added" if added else "present"
