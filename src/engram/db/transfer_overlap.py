"""What a file being copied into PostgreSQL and the target both hold, and how each overlap is settled.

Two overlaps are common when a home that used one shared file switched ``per_agent_databases``
on, two more when a file was used after its copy while PostgreSQL was too (``engram migrate`` run
again), and each is settled by a rule instead of refusing the file (``db/transfer.py`` asks, before
anything of the file is written, and applies the answer in one transaction):

- **One memory, two copies** (the same id, agent, session and key; the way over the docs give,
  ``export`` then ``import``, keeps ids, and the agent's copy changes afterwards: an edit, a
  recall's strengthening): the copy with the later ``updated_at`` is kept, on a tie the one
  the target holds (the agents' own files are copied first). The other copy's content, when it
  differs and is not already one of the memory's versions, becomes a version (``memory_versions``,
  replaced at the kept copy's ``updated_at``), so ``Engram.versions`` (``engram versions``) still shows it; each is named in
  the report. What recalls did to either copy is not lost with it (a recall does not move
  ``updated_at``): the kept copy takes the later ``last_accessed`` and the larger ``recall_count``
  of the two (not their sum: both count the recalls made before the copies parted), and, when
  neither was edited since they parted (the same ``updated_at``), the larger ``importance`` (a
  recall's strengthening; an edit may have set it, so the edited copy's stands), and the earlier
  ``received_at`` (the home held the memory since its first arrival). Its other fields
  (tags...) are the kept copy's: they change only by an edit, which the later ``updated_at`` is.
  The same id under another agent, session or key is not the same memory: a clash.
- **One conversation, two files** (the same agent and conversation key, its numbering restarted at
  1 in the agent's own file): the file's messages, when all are older than the target's first,
  are numbered before it (``seq`` only orders a conversation: appends take ``MAX + 1``, compaction
  and undo count from either end, the exchange index and summaries are keyed without it), so the
  conversation reads in time order. The target's rows are never renumbered: a resumed run still
  verifies the file they came from. The offset is remembered in ``engram_meta`` under the file's
  first message, so a resumed copy lands where it began. Messages interleaved in time (a
  conversation both sides added to since the copy, or the shared file written to after the
  agent's own began) are merged instead (``transfer_merge``): the file's messages the target holds
  as identical rows are the ones already copied, the others go in time order among the target's,
  whose later messages are renumbered to make room, all in one transaction under the
  conversation's append lock. Two summaries of one conversation are joined, the older (the file's) first.
- **One token on both sides** (the same id, agent and hash, i.e. the same secret: used on one side
  since the copy, or revoked): one token. The target's row takes the later ``last_used_at`` and the
  earlier ``revoked_at`` of the two, so a token revoked on either side stays revoked (a migrate
  never undoes a revocation); its name and creation are the target's (nothing changes them). The
  same id with another hash or agent is another token: a clash.

Any other row the target holds otherwise is a conflict (``Clash``: ``describe``, ``key_conflicts``):
the file is refused before anything of it is written (``refuse``), naming them and how each kind
(memory, conversation, token, audit entry) is resolved.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from engram import text
from engram.db import transfer_merge
from engram.errors import ValidationError
from engram.store.sql_store import MEMORY_COLUMNS
from engram.text import counted

# Positions in a memories row, read from MEMORY_COLUMNS (as transfer_rows selects it) so that a column
# added there cannot shift them: a hard-coded 21 once read superseded_at as received_at.
_MEMORY_COLUMNS = [name.strip() for name in MEMORY_COLUMNS.split(",")]
_ID, _AGENT, _SESSION, _KEY, _CONTENT, _IMPORTANCE, _UPDATED, _ACCESSED, _RECALLS, _RECEIVED = (
    _MEMORY_COLUMNS.index(name) for name in ("id", "agent", "session", "key", "content", "importance", "updated_at",
                                              "last_accessed", "recall_count", "received_at"))
_SUMMARY_JOIN = "\n\n"
# Positions in an api_tokens row (transfer_rows.TOKEN_COLUMNS).
_TOKEN_AGENT, _TOKEN_HASH, _LAST_USED, _REVOKED = 1, 3, 5, 6

# What a clashing row of each table belongs to, as ``refuse`` names it.
_OWNER = {
    "memories": "memory", "memory_links": "memory", "memory_versions": "memory", "memory_vectors": "memory",
    "history_messages": "conversation", "history_summaries": "conversation", "history_exchanges": "conversation",
    "api_tokens": "token", "audit_log": "audit entry",
}
# How a clash of each kind is resolved before running again; an audit entry only by copying into
# a database without it (``refuse``'s first hint), so it has none of its own.
_RESOLVE = {
    "memory": "a memory: forget or re-key it on one side, `engram export`/`import` to merge",
    "conversation": "a conversation: purge it on one side (`engram history purge KEY`)",
    "token": "a token: its id names another token there; remove it from one side and give its agent a new one"
             " (`engram token create`)",
}


@dataclass(frozen=True)
class Clash:
    """A row of the file the target holds otherwise, no rule settling it: ``what`` it belongs to
    (memory, conversation, token, audit entry) and the sentence naming it."""

    what: str
    said: str


@dataclass
class Overlaps:
    """How each overlap of one file with the target is settled (nothing written yet)."""

    kept: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # memory id -> target's row: the file's skipped
    replaced: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # memory id -> target's row: the file's wins
    file_rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # memory id -> the file's row of either
    offsets: dict[tuple[str, str], int] = field(default_factory=dict)  # (agent, conversation) -> seq offset
    new_offsets: dict[str, int] = field(default_factory=dict)  # engram_meta name -> offset, to remember
    summaries: dict[tuple[str, str], str] = field(default_factory=dict)  # joined summaries to write
    joined: set[tuple[str, str]] = field(default_factory=set)  # summaries left out of verification
    # (agent, conversation) -> the file's messages, merged in time order with the target's (``transfer_merge``)
    merges: dict[tuple[str, str], list[tuple[Any, ...]]] = field(default_factory=dict)
    positions: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)  # ... -> the file's seq -> the target's
    tokens: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # token id -> the file's row of a token both hold
    notes: list[str] = field(default_factory=list)
    conflicts: list[Clash] = field(default_factory=list)

    def land_memory(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A memories row of the file as the target holds it once settled: a copy replacing the
        target's with what recalls did to either (``_with_reads``)."""
        theirs = self.replaced.get(row[_ID])
        if theirs is None:
            return row
        landed = list(_with_reads(row, theirs))
        landed[_RECEIVED] = _first_arrival(row, theirs)
        return tuple(landed)

    def shift_message(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A history_messages row of the file at the position it takes in the target."""
        merged = self.positions.get((row[0], row[1]))
        if merged is not None:
            return (row[0], row[1], merged[row[2]], *row[3:])
        offset = self.offsets.get((row[0], row[1]), 0)
        return (row[0], row[1], row[2] + offset, *row[3:]) if offset else row


def _tie_importance(kept: tuple[Any, ...], other: tuple[Any, ...]) -> float | None:
    """``other``'s importance when neither copy was edited since they parted (only recalls raised it), else None."""
    return other[_IMPORTANCE] if kept[_UPDATED] == other[_UPDATED] else None


def _with_reads(kept: tuple[Any, ...], other: tuple[Any, ...]) -> tuple[Any, ...]:
    """``kept`` (a memories row) with what recalls did to it and ``other``: the later last access,
    the larger recall count and, unedited since they parted, the larger importance."""
    row = list(kept)
    row[_ACCESSED] = max((at for at in (kept[_ACCESSED], other[_ACCESSED]) if at is not None), default=None)
    row[_RECALLS] = max(kept[_RECALLS], other[_RECALLS])
    strengthened = _tie_importance(kept, other)
    if strengthened is not None:
        row[_IMPORTANCE] = max(kept[_IMPORTANCE], strengthened)
    return tuple(row)


def _first_arrival(one: tuple[Any, ...], other: tuple[Any, ...]) -> float | None:
    """The earlier ``received_at`` of two copies of one memory (an unknown one, NULL, left out)."""
    return min((at for at in (one[_RECEIVED], other[_RECEIVED]) if at is not None), default=None)


def settle_memories(overlaps: Overlaps, pairs: list[tuple[tuple[Any, ...], tuple[Any, ...]]], shown: str) -> None:
    """Each (file's row, target's row) of one memory id with other content: which copy is kept."""
    for mine, theirs in pairs:
        if (mine[_AGENT], mine[_SESSION], mine[_KEY]) != (theirs[_AGENT], theirs[_SESSION], theirs[_KEY]):
            overlaps.conflicts.append(Clash("memory",
                f"memory {mine[_ID]} is agent {theirs[_AGENT]!r}'s (key {theirs[_KEY]!r}) there,"
                f" agent {mine[_AGENT]!r}'s (key {mine[_KEY]!r}) here"))
            continue
        label = f"memory {mine[_ID]} (key {mine[_KEY]!r}, agent {mine[_AGENT]!r})"
        other = "; this file's content kept as a version" if mine[_CONTENT] != theirs[_CONTENT] else ""
        overlaps.file_rows[mine[_ID]] = mine
        if mine[_UPDATED] > theirs[_UPDATED]:
            overlaps.replaced[mine[_ID]] = theirs
            other = "; the database's content kept as a version" if other else ""
            overlaps.notes.append(f"{label}: this file's copy replaced the one in {shown} (newer){other}")
        else:
            overlaps.kept[mine[_ID]] = theirs
            why = "newer" if theirs[_UPDATED] > mine[_UPDATED] else "as new, and there first"
            reads = "; what recalls did to this file's copy carried" if _with_reads(theirs, mine) != theirs else ""
            overlaps.notes.append(f"{label}: kept the copy in {shown} ({why}){other}{reads}")


def meta_name(first: tuple[Any, ...]) -> str:
    """Where the offset of a conversation is remembered: named by the file's first message of it."""
    digest = hashlib.sha256(json.dumps([repr(v) if isinstance(v, float) else v for v in first],
                                       default=str).encode()).hexdigest()
    return "migrated_history_offset:" + digest[:32]


def conversations(conn: Any) -> tuple[dict[tuple[str, str], tuple[Any, ...]],
                                       dict[tuple[str, str], tuple[int, float, int]]]:
    """Each conversation of the file (``conn``: its SQLite connection): its first message (agent,
    conversation, seq, created_at, content), and its last seq, newest time and number of messages."""
    firsts, spans = {}, {}
    for agent, conversation, seq, created, content, last, newest, count in conn.execute(
            "SELECT h.agent, h.conversation, h.seq, h.created_at, h.content, s.last, s.newest, s.n"
            " FROM history_messages h JOIN (SELECT agent, conversation, MIN(seq) AS first, MAX(seq) AS last,"
            " MAX(created_at) AS newest, COUNT(*) AS n FROM history_messages GROUP BY agent, conversation) s"
            " ON h.agent = s.agent AND h.conversation = s.conversation AND h.seq = s.first"):
        firsts[(agent, conversation)] = (agent, conversation, seq, created, content)
        spans[(agent, conversation)] = (last, newest, count)
    return firsts, spans


def known_offsets(overlaps: Overlaps, conn: Any, firsts: dict[tuple[str, str], tuple[Any, ...]]) -> None:
    """The offsets an earlier run of this file chose (``firsts``: each conversation's first message)."""
    names = {meta_name(first): key for key, first in firsts.items()}
    for name, value in conn.execute("SELECT name, value FROM engram_meta WHERE name = ANY(%s)", (list(names),)):
        overlaps.offsets[names[name]] = int(value)


def settle_conversations(overlaps: Overlaps, conn: Any, clashing: set[tuple[str, str]],
                         spans: dict[tuple[str, str], tuple[int, float, int]],
                         firsts: dict[tuple[str, str], tuple[Any, ...]],
                         read_file: Callable[[str, str], list[tuple[Any, ...]]]) -> None:
    """Number each conversation both hold (``clashing``) before the target's messages, when the
    file's (``spans``: its last seq, newest time and count) are all older; else merge the two in
    time order (``transfer_merge``; ``read_file``: the file's messages of one conversation)."""
    for agent, conversation in sorted(clashing):
        first_seq, first_time = conn.execute(
            "SELECT MIN(seq), MIN(created_at) FROM history_messages WHERE agent = %s AND conversation = %s",
            (agent, conversation)).fetchone()
        last_seq, newest, count = spans[(agent, conversation)]
        if newest > first_time:
            overlaps.merges[(agent, conversation)] = read_file(agent, conversation)
            continue
        offset = int(first_seq) - 1 - int(last_seq)
        overlaps.offsets[(agent, conversation)] = offset
        overlaps.new_offsets[meta_name(firsts[(agent, conversation)])] = offset
        overlaps.notes.append(f"conversation {conversation!r} of agent {agent!r}: this file's {count} older"
                              " messages placed before the ones there (time order)")


def settle_tokens(overlaps: Overlaps, pairs: list[tuple[tuple[Any, ...], tuple[Any, ...]]], shown: str) -> None:
    """Each (file's row, target's row) of one token id with other content: the same token (agent
    and hash: its secret) used or revoked on one side since the copy is one token; else a clash."""
    for mine, theirs in pairs:
        if (mine[_TOKEN_AGENT], mine[_TOKEN_HASH]) != (theirs[_TOKEN_AGENT], theirs[_TOKEN_HASH]):
            other = "another secret" if mine[_TOKEN_AGENT] == theirs[_TOKEN_AGENT] else \
                f"agent {theirs[_TOKEN_AGENT]!r}'s there, agent {mine[_TOKEN_AGENT]!r}'s here"
            overlaps.conflicts.append(Clash("token", f"token {mine[0]} is another token there ({other})"))
            continue
        overlaps.tokens[mine[0]] = mine
        said = [f"token {mine[0]} (agent {mine[_TOKEN_AGENT]!r}): the same token in {shown}"]
        if (mine[_LAST_USED] or 0) > (theirs[_LAST_USED] or 0):
            said.append("this file's later last use taken")
        if theirs[_REVOKED] is not None:
            said.append("stays revoked (revoked there)" if mine[_REVOKED] is None else "revoked on both sides")
        elif mine[_REVOKED] is not None:
            said.append("revoked there too, as in this file")
        overlaps.notes.append("; ".join(said))


def settle_summaries(overlaps: Overlaps, pairs: list[tuple[tuple[Any, ...], tuple[Any, ...]]]) -> None:
    """Two summaries of one conversation: the file's (older) joined before the target's."""
    for mine, theirs in pairs:
        key = (mine[0], mine[1])
        overlaps.joined.add(key)
        if mine[2] in theirs[2]:
            continue  # already part of the one there: joined by an earlier run
        overlaps.summaries[key] = mine[2] + _SUMMARY_JOIN + theirs[2]
        overlaps.notes.append(f"conversation {mine[1]!r} of agent {mine[0]!r}: this file's summary joined before"
                              " the one there")


def apply(overlaps: Overlaps, conn: Any, memory_params: Any, shown: str) -> None:
    """Write what settling decided, in the caller's transaction: the losing copies' content as
    versions and their reads (``_with_reads``), the winning file copies over the target's, joined
    summaries, a token's later use and any revocation, conversations merged (their positions
    noted for the copy), remembered offsets (``shown``: the target, in notes).
    ``memory_params``: the insert parameters of a file's memories row (``transfer_rows.pg_params``)."""
    for memory_id, theirs in overlaps.kept.items():
        mine = overlaps.file_rows[memory_id]
        _keep_as_version(conn, memory_id, mine[_CONTENT], theirs[_CONTENT], theirs[_UPDATED])
        # GREATEST (NULLs ignored), not the values read when settling: a recall there meanwhile counts too.
        conn.execute("UPDATE memories SET last_accessed = GREATEST(last_accessed, %s),"
                     " recall_count = GREATEST(recall_count, %s), importance = GREATEST(importance, %s),"
                     " received_at = LEAST(received_at, %s) WHERE id = %s",
                     (mine[_ACCESSED], mine[_RECALLS], _tie_importance(theirs, mine), mine[_RECEIVED], memory_id))
    for memory_id, theirs in overlaps.replaced.items():
        mine = overlaps.file_rows[memory_id]
        _keep_as_version(conn, memory_id, theirs[_CONTENT], mine[_CONTENT], mine[_UPDATED])
        # The file's vector (copied next) goes with the file's copy; the old one described the old text.
        conn.execute("DELETE FROM memory_vectors WHERE memory_id = %s", (memory_id,))
        params = memory_params(overlaps.land_memory(mine))
        conn.execute(
            "UPDATE memories SET content = %s, category = %s, type = %s, layer = %s, tags = %s, metadata = %s,"
            " importance = %s, related_entity = %s, source = %s, created_at = %s, updated_at = %s,"
            " last_accessed = %s, recall_count = %s, superseded_by = %s, search_context = %s, valid_from = %s,"
            " valid_until = %s, superseded_at = %s, received_at = %s, content_hash = %s WHERE id = %s",
            (*params[_CONTENT:len(_MEMORY_COLUMNS)], text.content_hash(mine[_CONTENT]), memory_id))
    for (agent, conversation), summary in overlaps.summaries.items():
        conn.execute("UPDATE history_summaries SET summary = %s WHERE agent = %s AND conversation = %s",
                     (summary, agent, conversation))
    for token_id, mine in overlaps.tokens.items():
        # GREATEST and LEAST ignore NULLs: the later use, and the earlier revocation of either side (never undone).
        conn.execute("UPDATE api_tokens SET last_used_at = GREATEST(last_used_at, %s), revoked_at = LEAST(revoked_at, %s)"
                     " WHERE id = %s AND agent = %s AND token_hash = %s",
                     (mine[_LAST_USED], mine[_REVOKED], token_id, mine[_TOKEN_AGENT], mine[_TOKEN_HASH]))
    for (agent, conversation), messages in overlaps.merges.items():
        merge = transfer_merge.apply(conn, agent, conversation, messages)
        overlaps.positions[(agent, conversation)] = merge.positions
        if merge.inserted:
            overlaps.notes.append(
                f"conversation {conversation!r} of agent {agent!r}: this file's {counted(len(merge.inserted), 'message')} not in"
                f" {shown} merged in time order with its {merge.held} ({len(merge.moved)} of those renumbered after them)")
    for name, offset in overlaps.new_offsets.items():
        conn.execute("INSERT INTO engram_meta (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                     (name, str(offset)))


def _keep_as_version(conn: Any, memory_id: str, lost: str, kept: str, at: float) -> None:
    if lost == kept:
        return
    conn.execute(
        "INSERT INTO memory_versions (memory_id, content, replaced_at) SELECT %s, %s, %s WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_versions WHERE memory_id = %s AND content = %s)",
        (memory_id, lost, at, memory_id, lost))


def describe(table: str, row: tuple[Any, ...], key_width: int) -> Clash:
    """A row of the file the target holds with other content (``key_width``: how many leading columns key it)."""
    if table == "audit_log":
        return Clash(_OWNER[table], f"audit entry {row[0]} is another entry there")
    return Clash(_OWNER[table], f"{table} row {row[:key_width]!r} holds other content there")


def key_conflicts(conn: Any, batches: Iterable[list[tuple[Any, ...]]]) -> list[Clash]:
    """The file's memories (``batches`` of its memories rows) whose scope and key the target
    (``conn``) holds under another id: keys are unique in a scope, so copying would drop the
    file's memory (and then fail on its links)."""
    found = []
    for batch in batches:
        columns = [[row[i] for row in batch] for i in (_AGENT, _SESSION, _KEY)]
        held = conn.execute(
            "SELECT agent, session, key, id FROM memories WHERE (agent, session, key) IN"
            " (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))", columns).fetchall()
        there = {(a, s, k): memory_id for a, s, k, memory_id in held}
        for row in batch:
            other = there.get((row[_AGENT], row[_SESSION], row[_KEY]))
            if other is not None and other != row[_ID]:
                found.append(Clash("memory", f"key {row[_KEY]!r} of agent {row[_AGENT]!r} is memory {other} there,"
                                             f" {row[_ID]} here"))
    return found


def refuse(shown: str, conflicts: list[Clash]) -> None:
    """Refuse the file, naming what clashes and how each kind of clash is resolved, when the target
    (``shown``) holds any of its rows otherwise."""
    if conflicts:
        more = f" (and {len(conflicts) - 5} more)" if len(conflicts) > 5 else ""
        said = "; ".join(clash.said for clash in conflicts[:5])
        # Every kind that clashed, the ones past the fifth too, in the order first met.
        ways = [_RESOLVE[what] for what in dict.fromkeys(clash.what for clash in conflicts) if what in _RESOLVE]
        resolve = f"; resolve each ({'; '.join(ways)}) and run again" if ways else ""
        raise ValidationError("to", f"{shown} already holds {counted(len(conflicts), 'row')} that clash with this file's: "
                              f"{said}{more}; nothing of this file was copied, nothing overwritten",
                              f"a database without them, or this file's own earlier copy to resume{resolve}")
