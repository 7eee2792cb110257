"""Links named in memory files: made once a whole pass is settled, and reported when they cannot be.

An entry's links are the database's (a link joins two memories both ways, and each end's entry
lists the other). Two cases bring links in from the files:

- An entry whose id the database has never seen (a restored or copied folder) is imported with
  its links. The other end may be in a scope folder this pass settles later, so a link is not
  made while its entry's folder is settled: ``reconcile`` hands it here (``PendingLink``) and the
  syncer calls ``make`` once every folder of the pass is settled. A link that still names no
  memory then (a mistyped id, a memory forgotten since) is reported with its file and line; the
  others are made, so a folder read in any order comes back with every link it lists.
- An entry the database knows whose marker lists a link the database does not hold (typed in by
  hand, or a link the database dropped since that file was last written) is rewritten from the
  database like the rest of its bookkeeping; ``dropped`` says so, naming each such link and the
  command that makes it (or, when it names no memory the database holds, that there is none),
  instead of letting it vanish.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram import jsondoc
from engram.errors import EngramError

from .entry import Problem

if TYPE_CHECKING:
    from engram.model import Memory, Scope

    from .sides import DatabaseSide

# What a valid link looks like, said with every problem about one.
LINK_SYNTAX = ("a link names another memory by its id: links:ID1,ID2 in a markdown entry's marker,"
               " links: [ID1, ID2] in a YAML entry")


@dataclass(frozen=True, slots=True)
class PendingLink:
    """A link an imported entry lists that the import did not make: from the memory ``entry_id``
    of ``scope`` to what ``target`` names, listed at ``file``:``line``."""

    scope: Scope
    entry_id: str
    target: str
    file: str
    line: int


def make(database: DatabaseSide, pending: list[PendingLink]) -> list[Problem]:
    """Make each link of ``pending`` (the pass's folders all settled): one problem per link whose
    target names no memory either end may be linked from."""
    if not pending:
        return []
    linked = {m.id: set(m.links) for m in database.store.get_many(list({p.entry_id for p in pending}))}
    targets = {m.id: m for m in database.store.get_many(list({p.target for p in pending}))}
    problems = []
    for link in pending:
        if link.entry_id not in linked or link.target in linked[link.entry_id]:
            continue  # forgotten meanwhile, or the other end's entry listed the link too
        why = _link(database, link, targets.get(link.target))
        if why is not None:
            problems.append(Problem(link.file, link.line, f"entry {link.entry_id}: link {jsondoc.shown(link.target)} "
                                                          f"not made: {why}; {LINK_SYNTAX}"))
    return problems


def _link(database: DatabaseSide, link: PendingLink, target: Memory | None) -> str | None:
    """Link the entry to its target, first as the entry's scope sees it, then (a memory of another
    scope, such as an agent's memory a global entry lists) as the target's scope does, which sees
    the entry's; None when linked, else why not."""
    try:
        database.view(link.scope).link(link.entry_id, link.target)
        return None
    except EngramError as exc:
        reason = str(exc)
    if target is not None and target.scope != link.scope:
        try:
            database.view(target.scope).link(target.id, link.entry_id)
            return None
        except EngramError as exc:
            reason = str(exc)
    return reason


def dropped(database: DatabaseSide, memory: Memory, links: tuple[str, ...], file: str, line: int) -> list[Problem]:
    """A problem per link an entry of ``memory`` in ``file`` lists that the database does not hold:
    the entry is rewritten from the database, which owns its links, so each is said, not lost.
    A link to a memory the database holds was typed in by hand, and ``engram link`` makes it; one
    to no memory the database holds is most often to one forgotten while the mirror was off (its
    entry leaves its file in the same pass), so it is said as that, not as a hand-typed link. A
    link to a memory this pass forgot (``DatabaseSide.forgotten``: its entry was removed from its
    file) is the database's own link, which the forget dropped: it leaves the file unsaid, as does
    one a move dropped (``DatabaseSide.cut``), but for the moved entry's own, which says why."""
    forgotten_here = {m.id for m in database.forgotten}
    cut = database.cut.get(memory.id, set())
    unlinked = [target for target in links if target not in memory.links and target not in forgotten_here]
    if memory.id in database.moved:  # its entry was moved by hand: why its links to another agent's went
        moved_out = [Problem(file, line, f"entry {memory.id}: link to {jsondoc.shown(target)} is taken out of the file: the entry"
                                         f" moved to {memory.scope}, and a link never joins two agents' memories")
                     for target in unlinked if target in cut]
    else:
        moved_out = []  # the other end of a link a move dropped: as a forget's, it leaves the file unsaid
    unlinked = [target for target in unlinked if target not in cut]
    if not unlinked:
        return moved_out
    held = {m.id for m in database.store.get_many(unlinked)}
    return moved_out + [
        Problem(file, line, f"entry {memory.id}: link {jsondoc.shown(target)} is not the database's and is taken out"
                            f" of the file (links are made through engram: engram link {memory.id} ID; {LINK_SYNTAX})"
                if target in held else
                f"entry {memory.id}: link to {jsondoc.shown(target)} is taken out of the file: no memory"
                f" {jsondoc.shown(target)} in the database (forgotten, or never made)")
        for target in unlinked]
