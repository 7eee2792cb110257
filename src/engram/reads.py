"""Reading memories by name and listing them: ``find``/``get`` (an id, else a key), ``get_by_key``,
``named`` (the one resolver every door uses for "by id or by key"), ``list``, ``count`` and
``versions``.

A key is unique in its scope only, so a key is read in the scopes this view sees (most specific
first); an id names one memory, so it reaches the view's own agent's memories in any of its
sessions (``visibility.reaches``), never another agent's. A not-found that another session of the
agent explains says so (``_not_found``). A ``Memory`` handed back in is taken as it is when this
view may read it where it says (``_as_stored``: one id look-up), and read again as stored where a
write or an audit row must not take the caller's copy (``_stored_records``). Every memory handed
out goes through ``_shown`` (``scoping``); recall is ``recalling``'s.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engram import jsondoc
from engram.errors import NotFoundError, ValidationError
from engram.model import (
    MAX_LIST_LIMIT,
    ORDERS,
    Memory,
    MemoryFilter,
    MemoryVersion,
    Order,
    Scope,
    parse_limit,
    parse_offset,
    parse_ref,
)
from engram.scoping import Filters, ScopeChoice, one_selector
from engram.visibility import held_by_id, sessions_holding_key


class _Reading:
    """``Engram``'s reads of memories by id, key or filter."""

    def find(self, ref: str) -> Memory | None:
        """The memory with this id (this agent's in any of its sessions, or a global one), else the
        one with this key in the visible scopes (most specific first). A key is unique in its scope
        only, so it is read where this view reads; an id names one memory, so this agent reaches
        its own by id from any view of it (``visibility.reaches``), never another agent's."""
        self.writes.refuse_when_closed("read")
        return self._find(ref)

    def _find(self, ref: str) -> Memory | None:
        # Unguarded: a write accepted before ``close`` settles its links here while close waits for it.
        ref = parse_ref(ref)
        memory = self.store.get(ref, self._filter())  # an id in the visible scopes, else a key there
        if memory is None or memory.id != ref:
            # An id first, as a ref reads: one of this agent's other sessions' (one look-up by id).
            memory = held_by_id(self.store, self.scope, ref) or memory
        return None if memory is None else self._shown([memory])[0]

    def get(self, ref: str) -> Memory:
        """Like ``find`` but raises ``NotFoundError`` (saying so when the key is held in another
        session of this agent, which a key does not reach: ``_not_found``)."""
        memory = self.find(ref)
        if memory is None:
            raise self._not_found(ref)
        return memory

    def _not_found(self, ref: str, field: str | None = None) -> NotFoundError:
        """``NotFoundError`` for ``ref`` read as a key (or an id) in the visible scopes; when sessions
        of this agent that this view does not see hold that key, the error names them and the ids
        that reach those memories, so "not found" does not read as "not stored". Asked only once
        nothing was found."""
        plain = NotFoundError("memory", ref, field=field)
        held = sessions_holding_key(self.store, self.scope, ref.strip())  # as the look-up read it (parse_ref)
        if not held:
            return plain
        where = ", ".join(f"{jsondoc.shown(m.scope.session)} (id {m.id})" for m in held)
        sessions, holds = ("session", "holds") if len(held) == 1 else ("sessions", "hold")
        return NotFoundError("memory", ref, field=field, message=(
            f"{plain}; this agent's {sessions} {where} {holds} that key, and a key is read in this view's scopes only "
            f"({', '.join(map(str, self.scope.visible()))}): name the memory by its id, which reaches every session "
            "of its agent, or read the key from its session (engram --session ID, the X-Engram-Session header, "
            "session=... in Python)"))

    def _link_target(self, index: int, ref: str) -> Memory:
        """The memory a write's ``links[index]`` names (an id, else a key); ``NotFoundError`` names
        the link, so a missing one is not read as the memory being stored, as ``ValidationError``
        does an empty or unusable one (it named ``ref``, a field no caller sends)."""
        memory = self._find(parse_ref(ref, f"links[{index}]"))
        if memory is None:
            raise NotFoundError("memory", ref, field=f"links[{index}]")
        return memory

    def get_by_key(self, key: str) -> Memory:
        """The memory with this key in the visible scopes (most specific first), whatever the key
        holds: unlike ``get``, a key that is also another memory's id still finds the key's own.
        Raises ``NotFoundError``."""
        self.writes.refuse_when_closed("read")
        key = parse_ref(key, "key")
        memory = self.store.get(key, self._filter())
        if memory is not None and memory.key != key:
            memory = self._holding_key(key)
        if memory is None:
            raise self._not_found(key)
        return self._shown([memory])[0]

    def _holding_key(self, key: str) -> Memory | None:
        """The visible memory with this key (most specific scope first), when ``key`` is also
        another memory's id: the store's ``get`` looks ids up first, so the key is asked for by a
        filter on it (one indexed query; a key is unique within its scope)."""
        visible = self.scope.visible()
        found = {m.scope: m for m in self.store.list(replace(self._filter(), include_superseded=True, key=key),
                                                     limit=len(visible))}
        return next((found[scope] for scope in visible if scope in found), None)

    def _key_or_id(self, value: str) -> Memory:
        """The visible memory whose key is ``value``, else the one whose id it is (``named``'s
        ``or_id``): one read when ``value`` is a key or nothing, two when it is an id."""
        memory = self.store.get(value, self._filter())  # (the store reads an id first, then a key)
        if memory is not None and memory.key != value:
            memory = self._holding_key(value) or memory
        if memory is None:  # no key of the visible scopes: an id of this agent's other sessions too
            memory = held_by_id(self.store, self.scope, value)
        if memory is None:
            raise self._not_found(value)
        return self._shown([memory])[0]

    def named(self, ref: str | Memory | None = None, key: str | None = None, *, field: str = "memory",
              names: tuple[str, str] = ("ref", "key"), or_id: bool = False) -> Memory:
        """The memory named by exactly one of ``ref`` (an id, else a key: ``get``) or ``key`` (always
        a key, even one equal to another memory's id: ``get_by_key``), in the scopes this view may
        read (another agent's key never resolves). Every method and door that takes one memory
        "by id or by key" resolves it here, so all read a reference alike. ``names`` are what the
        caller calls the two (``--key``, ``memory_id``, ``to_key``) and ``field`` what it is doing,
        so an error reads in the caller's words. Raises ``ValidationError`` on ``field`` when both
        or neither is given (or on the one given when it is empty), ``NotFoundError`` when nothing
        answers (naming the key's name when it was a key).

        ``ref`` may be a ``Memory`` this view handed out: a door resolves each end itself, so its
        errors name its own arguments, and passes the memory on to ``link``, ``supersede``, ...,
        which take it as it is instead of reading it again. One this view may not read (another
        agent's, another session's) is not found, as its id would be. What decides is where the
        memory with that id is stored, not the scope the ``Memory`` says (one built by a caller
        says global by default): one id look-up, no row read. A scope that is not a ``Scope``
        raises ``ValidationError`` on ``<names[0]>.scope``, as does one other than the stored
        memory's when this view may read that memory.

        ``or_id`` reads ``key`` as an id when no memory this view may read has that key: PtrClaw's
        tools take keys, and an engram id (which their results also show) may stand in for one."""
        self.writes.refuse_when_closed("read")
        chosen = one_selector(field, {names[0]: ref, names[1]: key})
        if isinstance(ref, Memory):
            return self._as_stored(ref, f"{names[0]}.scope")
        value = parse_ref(ref if key is None else key, chosen)
        if key is None:
            return self.get(value)  # 'memory not found: "x"', as every door said before keys could be named
        try:
            return self._key_or_id(value) if or_id else self.get_by_key(value)
        except NotFoundError:
            raise self._not_found(value, chosen) from None

    def _as_stored(self, memory: Memory, field: str) -> Memory:
        """``memory`` (given, not read) when it is stored where it says and this view may read it
        there (``named``). Its own scope is not enough: a ``Memory`` built by a caller says global
        unless told otherwise, and global memories are readable by every agent, so an agent
        naming another's id in one would reach that memory. The store is asked by id, in the
        scope the memory says (one look-up, loading no row)."""
        if not isinstance(memory.scope, Scope):
            raise ValidationError(field, f"got {type(memory.scope).__name__}",
                                  "a Scope: the memory as this view handed it out")
        if self._reaching([memory]).matches(memory) and self.store.matching_ids(
                [memory.id], replace(self._readable, scopes=(memory.scope,))):
            return memory
        if self.store.matching_ids([memory.id], self._readable) or held_by_id(self.store, self.scope, memory.id):
            raise ValidationError(field, f"{memory.id} is not stored in {memory.scope}",
                                  "the memory as this view handed it out (or its id)")
        raise NotFoundError("memory", memory.id)  # gone, or not this view's to read: as its id would be

    def list(
        self,
        filters: Filters | None = None,
        *,
        order: Order = "recent",
        limit: int = 50,
        offset: int = 0,
        scope: ScopeChoice | None = None,
    ) -> list[Memory]:
        self.writes.refuse_when_closed("read")
        if order not in ORDERS:
            raise ValidationError("order", f"unknown order {jsondoc.shown(order)}", ORDERS)
        limit, offset = parse_limit(limit, MAX_LIST_LIMIT), parse_offset(offset)
        return self._shown(self.store.list(self._filter(filters, scope=scope), order=order, limit=limit, offset=offset))

    def most_important(self, limit: int = 10, filters: Filters | None = None) -> list[Memory]:
        return self.list(filters, order="importance", limit=limit)

    def most_recent(self, limit: int = 20, filters: Filters | None = None) -> list[Memory]:
        return self.list(filters, order="recent", limit=limit)

    def count(self, filters: Filters | None = None, *, scope: ScopeChoice | None = None) -> int:
        self.writes.refuse_when_closed("read")
        return self.store.count(self._filter(filters, scope=scope))

    def versions(self, ref: str | Memory) -> list[MemoryVersion]:
        """Earlier contents of a memory (by id or key, or a ``Memory`` as ``update`` takes one),
        oldest first. Raises ``NotFoundError``, also naming a ``Memory`` forgotten since it was read."""
        self.writes.refuse_when_closed("read")
        if not isinstance(ref, Memory):
            return self.store.versions(self.get(ref).id)
        memory = self.named(ref, field="versions")
        found = self.store.versions(memory.id)
        # Versions go with their memory, so only none needs asking whether it is still there (no row loaded).
        if not found and not self.store.matching_ids([memory.id], self._reaching([memory])):
            raise NotFoundError("memory", memory.id)
        return found

    def _stored_records(self, memories: Sequence[Memory], refs: Sequence[object]) -> list[Memory]:
        """``memories`` as stored, read again (in one read) only where their ref was a ``Memory``
        handed in: ``named`` takes one as it is, so its key, scope and content are the caller's, and
        an audit row written from it would record what the caller made up (in a global memory's
        trail, every agent's). A memory gone meanwhile stays as given."""
        handed = [m.id for m, ref in zip(memories, refs, strict=True) if isinstance(ref, Memory)]
        if not handed:
            return list(memories)
        stored = {m.id: m for m in self.store.get_many(handed)}
        return [stored.get(m.id, m) for m in memories]

    def _gone(self, first: Memory, second: Memory) -> Memory:
        """Which of two memories read earlier is no longer stored (the second when both are gone
        is never asked: the first is named)."""
        return first if not self.store.matching_ids([first.id], self._reaching([first])) else second

    def _all(self, filt: MemoryFilter) -> list[Memory]:
        out: list[Memory] = []
        while True:
            page = self.store.list(filt, order="oldest", limit=1000, offset=len(out))
            out.extend(page)
            if len(page) < 1000:
                return out
