"""One conversation that got new messages both in the file and in PostgreSQL since its copy: merged in time order.

``engram migrate`` run again on a file written to since its verified copy (a client still on
SQLite) finds a conversation whose messages after the copy differ on the two sides: each is a
message the other lacks, not a clash. The file's messages the database already holds are
recognised as identical rows (every column but the number: role, content, tool calls, metadata,
``created_at``), matched in order so a message said twice stays twice; only the others are new.
Each new message goes after the database's messages it follows in time (``created_at``; a tie
keeps the database's first) and never before the file's message it followed there, and after the
new ones before it (its file order): a stable merge. The database's messages keep their order;
those after a new one are renumbered (``seq`` + the new messages before them: numbers only order a
conversation, positions are counted in that order, the exchange index and summaries are keyed without them).

All of it happens in ``transfer_overlap.apply``'s one transaction, under the conversation's append
lock (``history.postgres.lock_conversation``), planned again there from what the database holds by
then: an append on PostgreSQL meanwhile waits, and is merged too. Each of the file's messages gets
its number in the database (``Merge.positions``), which the copy and its verification use: a
resumed or repeated run finds every message identical and adds nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from engram.db import transfer_rows
from engram.history.postgres import lock_conversation

_SEQ, _CREATED = 2, 8  # positions in a history_messages row (transfer_rows.QUERIES)


@dataclass
class Merge:
    """Where the file's messages of one conversation land among the database's."""

    positions: dict[int, int] = field(default_factory=dict)  # the file's seq -> its seq in the database
    inserted: list[tuple[Any, ...]] = field(default_factory=list)  # the file's new messages, renumbered
    moved: dict[int, int] = field(default_factory=dict)  # the database's seq -> its new seq
    held: int = 0  # the database's messages of the conversation


def _identity(row: tuple[Any, ...]) -> bytes:
    """A message as bytes without its number, the same from either database."""
    return transfer_rows.canonical("history_messages", (row[0], row[1], None, *row[3:]))


def plan(mine: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]]) -> Merge:
    """Merge the file's messages (``mine``) into the database's (``theirs``), both in seq order (module docstring)."""
    merge = Merge(held=len(theirs))
    waiting: dict[bytes, list[int]] = defaultdict(list)  # identity -> the database's unmatched indexes, in order
    for index, row in enumerate(theirs):
        waiting[_identity(row)].append(index)
    matched: dict[int, int] = {}  # the file's index -> the database's index
    for index, row in enumerate(mine):
        same = waiting.get(_identity(row))
        if same:
            matched[index] = same.pop(0)
    # Where each new message goes (by its index in the file): before the database's message at that
    # index (len(theirs): after the last).
    slots: list[tuple[int, int]] = []
    floor = 0
    for index, row in enumerate(mine):
        if index in matched:
            floor = max(floor, matched[index] + 1)
            continue
        while floor < len(theirs) and theirs[floor][_CREATED] <= row[_CREATED]:
            floor += 1
        slots.append((floor, index))
    new_seq = _number(slots, [row[_SEQ] for row in theirs], merge.moved) if theirs else \
        {index: mine[index][_SEQ] for _, index in slots}  # nothing there to merge with: the file's numbering
    for index, row in enumerate(mine):
        if index in matched:
            old = theirs[matched[index]][_SEQ]
            merge.positions[row[_SEQ]] = merge.moved.get(old, old)
        else:
            merge.positions[row[_SEQ]] = new_seq[index]
            merge.inserted.append((row[0], row[1], new_seq[index], *row[3:]))
    return merge


def _number(slots: list[tuple[int, int]], seqs: list[int], moved: dict[int, int]) -> dict[int, int]:
    """The number of each new message (``slots``: where each goes among the database's numbers
    ``seqs``), filling ``moved`` with the database's messages renumbered to make room."""
    ahead = [index for slot, index in slots if slot == 0]  # before the database's first: numbered before it
    numbers = {index: seqs[0] - len(ahead) + i for i, index in enumerate(ahead)}
    later = [(slot, index) for slot, index in slots if slot > 0]
    before = at = 0  # new messages placed so far after the database's first; the next of ``later``
    for position, seq in enumerate(seqs):
        while at < len(later) and later[at][0] == position:
            numbers[later[at][1]] = seq + before  # where this one was, after the previous one moved as far
            before += 1
            at += 1
        if before:
            moved[seq] = seq + before
    for offset, (_, index) in enumerate(later[at:], start=1):
        numbers[index] = seqs[-1] + before + offset
    return numbers


def messages_there(conn: Any, agent: str, conversation: str) -> list[tuple[Any, ...]]:
    """The database's messages of one conversation (``conn``: PostgreSQL), in seq order."""
    select = transfer_rows.QUERIES["history_messages"][1].split(" ORDER BY ")[0]
    return [tuple(row) for row in conn.execute(f"{select} WHERE agent = %s AND conversation = %s ORDER BY seq",
                                               (agent, conversation))]


def apply(conn: Any, agent: str, conversation: str, mine: list[tuple[Any, ...]]) -> Merge:
    """Merge, in the caller's transaction: under the conversation's append lock, planned from what
    the database holds by then, its messages renumbered to make room and the file's new ones inserted."""
    lock_conversation(conn, agent, conversation)
    merge = plan(mine, messages_there(conn, agent, conversation))
    if merge.moved:
        # Two steps, as a key is checked row by row: first above every number either side uses, then down.
        numbers = [*merge.moved, *merge.moved.values()]
        lift = max(numbers) - min(numbers) + 1
        conn.execute("UPDATE history_messages h SET seq = m.new + %s FROM unnest(%s::int8[], %s::int8[]) AS m(old, new)"
                     " WHERE h.agent = %s AND h.conversation = %s AND h.seq = m.old",
                     (lift, list(merge.moved), list(merge.moved.values()), agent, conversation))
        conn.execute("UPDATE history_messages SET seq = seq - %s WHERE agent = %s AND conversation = %s AND seq >= %s",
                     (lift, agent, conversation, min(merge.moved.values()) + lift))
    if merge.inserted:
        with conn.cursor() as cur:
            cur.executemany(transfer_rows.INSERTS["history_messages"],
                            [transfer_rows.pg_params("history_messages", row) for row in merge.inserted])
    return merge
