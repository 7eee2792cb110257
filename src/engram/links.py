"""Relations between memories: links both ways (``link``, ``unlink``, ``neighbours``, ``link_keys``)
and supersession (``supersede``: an old fact retired by a new one; ``supersedes``: what one retired).

Each end is named as ``reads.named`` reads it, the first before the second, so an error names the
caller's own argument. The store makes each change in one write that also checks both ends are
still stored (and, for supersede, that no cycle forms), so a race with a forget or an opposite
supersede is refused and named (``_gone``), never half done. A view is shown links only to
memories it may read (``_shown``, ``link_keys``).

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engram.errors import NotFoundError, ValidationError
from engram.model import MAX_LIST_LIMIT, Memory, parse_limit
from engram.scoping import Filters
from engram.store.base import SupersedeCycle


class _Linking:
    """``Engram``'s links and supersession."""

    def supersede(self, old_ref: str | Memory | None = None, new_ref: str | Memory | None = None, *,
                  old_key: str | None = None, new_key: str | None = None) -> Memory:
        """Mark the old memory superseded by the new one, each named as ``named`` reads it: by
        ``old_ref``/``new_ref`` (an id, else a key, or a ``Memory`` this view gave) or by
        ``old_key``/``new_key`` (a key only). The
        old one stays stored, drops out of recall, and its valid time closes where the new fact's
        begins (its ``valid_from``, else now) unless it already had an end. Returns the superseded
        memory. Raises ``ValidationError`` or ``NotFoundError`` naming the end (nothing changed), and
        ``ValidationError`` when the new one is already superseded by the old (a cycle)."""
        self.writes.refuse_when_closed()
        old = self.named(old_ref, old_key, field="supersede", names=("old_ref", "old_key"))
        new = self.named(new_ref, new_key, field="supersede", names=("new_ref", "new_key"))
        # Its reason names the new one's key and its row the old one's previous state: the stored ones.
        old, new = self._stored_records([old, new], [old_ref, new_ref])
        if old.id == new.id:
            raise ValidationError("supersede", "a memory cannot supersede itself", "two different memories")
        if new.scope not in old.scope.visible():
            # Everyone who sees the old fact must be able to follow it to the new one: an agent's
            # memory cannot retire a global one for every other agent.
            raise ValidationError("supersede", f"{new.key} ({new.scope}) is not visible to everyone who sees"
                                  f" {old.key} ({old.scope})", f"a successor in {' or '.join(map(str, old.scope.visible()))}")
        now = self.clock()
        try:
            # The store refuses a cycle in the write itself, so two supersedes racing the opposite
            # ways (two threads, processes or hosts) cannot both pass a check made before it.
            done = self.store.set_superseded(old.id, new.id, now=now,
                                             valid_until=new.valid_from if new.valid_from is not None else now)
        except SupersedeCycle as exc:
            # A cycle would take both out of recall, each retired by the other: nothing would hold.
            raise ValidationError("supersede", f"{new.key} is itself superseded by {old.key} (directly or through"
                                  " others): both would leave recall", f"a successor that {old.key} does not supersede") from exc
        if not done:
            # An end was forgotten since it was read (the store checks both in its write): name it.
            raise NotFoundError("memory", self._gone(old, new).id)
        closed = self.store.get(old.id, self._reaching([old])) or old
        self._emit("updated", [closed], f"superseded by {new.key}", previous=[old])
        return self._shown([closed])[0]

    def link(self, a: str | Memory | None = None, b: str | Memory | None = None, *, a_key: str | None = None,
             b_key: str | None = None) -> bool:
        """Link two memories both ways, each end named as ``named`` reads it: ``a``/``b`` (an id,
        else a key, or a ``Memory`` this view gave, not read again) or ``a_key``/``b_key`` (a key
        only). True when the link was made, False when the two were already linked (nothing
        changed, nothing audited), as ``unlink`` says False for two that were not. Raises
        ``ValidationError`` or ``NotFoundError`` naming the end (nothing linked)."""
        self.writes.refuse_when_closed()
        first, second = self._ends("link", a, a_key, b, b_key)
        if first.id == second.id:
            raise ValidationError("link", "a memory cannot link to itself", "two different memories")
        # The stored records, not a Memory handed in: it may have been read before an earlier link, and
        # its key is the caller's (the audit row names the stored one). One read, of both ends.
        stored = {m.id: m for m in self.store.get_many([first.id, second.id])}
        if first.id in stored and second.id in stored[first.id].links:
            return False
        if not self.store.link(first.id, second.id):  # an end was forgotten since it was read: name that one
            raise NotFoundError("memory", self._gone(first, second).id)
        self._emit("linked", [stored.get(first.id, first), stored.get(second.id, second)])
        return True

    def unlink(self, a: str | Memory | None = None, b: str | Memory | None = None, *, a_key: str | None = None,
               b_key: str | None = None) -> bool:
        """Remove the link between two memories (named as ``link`` names them); False when they
        were not linked."""
        self.writes.refuse_when_closed()
        first, second = self._ends("unlink", a, a_key, b, b_key)
        removed = self.store.unlink(first.id, second.id)
        if removed:
            self._emit("unlinked", self._stored_records([first, second], [a, b]))
        elif len(self.store.matching_ids([first.id, second.id], self._reaching([first, second]))) < len({first.id, second.id}):
            # Not "were not linked": an end was forgotten since it was read.
            raise NotFoundError("memory", self._gone(first, second).id)
        return removed

    def _ends(self, field: str, a: str | Memory | None, a_key: str | None, b: str | Memory | None,
              b_key: str | None) -> tuple[Memory, Memory]:
        """The two memories a link names, the first resolved before the second."""
        return (self.named(a, a_key, field=field, names=("a", "a_key")),
                self.named(b, b_key, field=field, names=("b", "b_key")))

    def neighbours(self, ref: str | Memory | None = None, limit: int = 20, *, key: str | None = None,
                   include_superseded: bool = True) -> list[Memory]:
        """The memories linked to the one named by ``ref`` (an id, else a key, or a ``Memory`` this
        view gave, not read again) or ``key`` (a key only) that this view may read, newest first.
        A superseded neighbour is listed, its ``superseded_by`` set, as the memory's ``links`` and
        ``link_keys`` name it: the link is still there, to see and to unlink (recall's link expansion
        still leaves superseded memories out). ``include_superseded=False`` leaves them out.
        Raises ``ValidationError`` for a ``limit`` that is not 1 to 1000."""
        self.writes.refuse_when_closed("read")
        # Checked here: the stores slice by it, so -1 dropped the last neighbour and 0 returned none.
        limit = parse_limit(limit, MAX_LIST_LIMIT, paged=False)
        memory = self.named(ref, key, field="neighbours")
        # Those a memory of another session of this agent (reached by id) has there too: as that session sees them.
        readable = self._filter(Filters(include_superseded=include_superseded))
        found = self.store.neighbours(memory.id, replace(readable, scopes=self._reaching([memory]).scopes),
                                      limit=limit)
        # None found may mean the memory itself was forgotten since it was read: say so.
        if not found and isinstance(ref, Memory) and not self.store.matching_ids([memory.id], self._reaching([memory])):
            raise NotFoundError("memory", memory.id)
        return self._shown(found)

    def supersedes(self, ref: str | Memory | None = None, limit: int = 50, *, key: str | None = None) -> list[Memory]:
        """The memories that the one named by ``ref`` (as ``neighbours`` names it) or ``key``
        supersedes (their ``superseded_by`` is its id) that this view may read, oldest first: the
        other way along a supersede, which the memory itself does not record. Raises
        ``ValidationError`` for a ``limit`` that is not 1 to 1000, ``NotFoundError`` when nothing
        answers to ``ref``."""
        self.writes.refuse_when_closed("read")
        limit = parse_limit(limit, MAX_LIST_LIMIT, paged=False)
        memory = self.named(ref, key, field="supersedes")
        found = self.store.list(replace(self._reaching([memory]), superseded_by=memory.id), order="oldest", limit=limit)
        return self._shown(found)

    def link_keys(self, memories: Sequence[Memory]) -> list[list[str]]:
        """For each of ``memories``, the keys of the memories it links to that this view may read,
        in link order: how PtrClaw shows links (``links: keys of bidirectionally linked entries``)
        to a model, which writes keys, not ids. A link to a memory this view may not read is left
        out, whoever handed the memories in."""
        self.writes.refuse_when_closed("read")
        # Every link asked of the store, those to memories in hand too (``_shown`` takes them as
        # readable): a ``Memory`` is a record anyone can build, and one carrying another agent's id
        # among its own links would otherwise be shown that memory's key, often made from its content.
        linked = sorted({i for m in memories for i in m.links})
        if not linked:
            return [[] for _ in memories]
        # (A memory of another session of this agent, reached by id, shows its links as that
        # session does: ``_reaching`` widens to the scopes of this agent's alone.)
        readable = self.store.matching_ids(linked, self._reaching(memories))
        keys = {m.id: m.key for m in self.store.get_many(sorted(readable))}
        return [[keys[i] for i in m.links if i in keys] for m in memories]
