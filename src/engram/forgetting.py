"""Forgetting: ``forget`` removes memories (one by name, or in bulk by query, tag or age) with every
link to them; ``forget_own`` clears this view's own (its agent's and its session's), never global ones.

A bulk forget takes the automatic backup first (``guard``), and each removal is announced
(``forgotten``: audit trail, memory folder) with its reason. ``erase=True`` then leaves nothing of
them but their ids: that is ``engram.erase``'s, loaded on use as the engine loads the audit trail's
modules. Compaction's purge of old conversation memories is a ``forget_own``
(``_forget_old_conversations``).

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from engram import jsondoc
from engram.errors import NotFoundError, ValidationError
from engram.lifecycle.settings import PROTECTED_TYPES
from engram.model import Category, Memory, parse_flag, parse_number, parse_reason, parse_tags, parse_words
from engram.scoping import Filters, ScopeChoice, one_selector
from engram.temporal.instants import EARLIEST

# ``forget``'s steps, as its ``progress`` hears them: a stop while backing up has forgotten nothing;
# one while forgetting, all or none (a Ctrl-C during the commit is raised once it is done).
BACKING_UP = "taking the backup before a bulk forget"
FORGETTING = "forgetting them in one transaction (all or none: engram count tells which)"
RECORDING = "recording the forgotten memories in the audit trail and memory folder"
ERASING = "erasing the forgotten memories' traces"


class _Forgetting:
    """``Engram``'s removal of memories."""

    def forget(
        self,
        ref: str | Memory | None = None,
        *,
        query: str | None = None,
        tag: str | None = None,
        older_than_s: float | None = None,
        filters: Filters | None = None,
        dry_run: bool = False,
        reason: str | None = None,
        erase: bool = False,
        scope: ScopeChoice | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> list[Memory]:
        """Remove memories and every link to them; returns what was (or, dry run, would be) removed.

        Exactly one selector: ``ref`` (an id or key, or a ``Memory`` as ``named`` takes one),
        ``query`` (memories holding every one of its words, however short or common), ``tag``, or ``older_than_s`` (created
        more than that many seconds ago);
        ``filters`` narrow the bulk selectors, and ``scope`` (``"session"``, ``"agent"``, ``"global"``)
        keeps them to that one scope, as ``list``'s does (ClawCode's forget within a session);
        ``reason`` is kept in the audit trail.
        ``progress(phase, done, total)`` hears each step of a real forget (``BACKING_UP``,
        ``FORGETTING``, ``RECORDING``, ``ERASING``), so a stop mid-way can say what it kept: the
        removal is one transaction (all of them or none), and after it the audit trail and the
        memory folder are told, then an erase takes out their traces.
        ``erase``: forget, then leave nothing of them but their ids (``engram.erase``); no backup is
        taken first, as a bulk forget takes one: it would be a fresh copy of what is erased.
        Raises ``NotFoundError`` for an unknown ``ref``.
        """
        self.writes.refuse_when_closed()
        erase = parse_flag(erase, "erase")
        one_selector("forget", {"ref": ref, "query": query, "tag": tag, "older_than_s": older_than_s})
        base = filters or Filters()
        if ref is not None:
            targets = [self.named(ref, field="forget")]
        elif query is not None:
            targets = self.store.find_matching_all(parse_words(query), self._filter(base, scope=scope))
        elif tag is not None:
            wanted = parse_tags(tag, "tag", drop_empty=True)
            if not wanted:  # no tag would narrow nothing: every memory in view, not "the untagged"
                raise ValidationError("tag", f"{jsondoc.shown(tag)} names no tag", "a tag (non-empty text)")
            targets = self._all(self._filter(replace(base, tags=(*parse_tags(base.tags, drop_empty=True), *wanted)),
                                             scope=scope))
        else:
            older_than_s = parse_number(older_than_s, "older_than_s", "a number of seconds, 0 or more", 0)
            cutoff = max(self.clock() - older_than_s, EARLIEST)  # older than any date: none is
            targets = self._all(self._filter(replace(base, until=cutoff), scope=scope))
        from engram import erase as erase_mod  # on use, as the engine loads the audit trail's modules

        erasing = erase and not parse_flag(dry_run, "dry_run")
        # An erase works from what the store holds: a ``Memory`` handed in (``named`` takes it as it
        # is) is the caller's record, whose key and content need not be the stored ones, and its key
        # would be stripped from the link rows of the scopes it sees (a global one's: every agent's).
        held = self.store.get_many([targets[0].id]) if erasing and isinstance(ref, Memory) else targets
        # The texts an erase also takes out of the embedding cache, read before the versions go.
        texts = erase_mod.texts_of(self.store, held) if erasing else []
        removed = self._delete(targets, bulk=ref is None and not erase, dry_run=dry_run, reason=reason,
                               progress=progress)
        if ref is not None and not removed:  # a Memory given was already gone (read before): as its id would be
            raise NotFoundError("memory", targets[0].id)
        if erasing and removed:
            gone = {m.id for m in removed}
            if progress is not None:
                progress(ERASING, len(removed), len(removed))
            erase_mod.erase_traces(self, [m for m in held if m.id in gone], reason, texts)
        return removed

    def _delete(self, targets: Sequence[Memory], *, bulk: bool, dry_run: bool = False,
                reason: str | None = None, progress: Callable[[str, int, int], None] | None = None) -> list[Memory]:
        """``forget``'s removal of ``targets`` (a bulk one after the backup guard)."""
        dry_run = parse_flag(dry_run, "dry_run")  # ("no" was a dry run, 0 a real one: checked before either)
        parse_reason(reason)  # before anything goes: the audit trail keeps it (PostgreSQL refuses a NUL)
        shown = self._shown(targets)  # before the links go with them
        if dry_run or not targets:
            return shown
        if bulk and self.guard is not None:
            if progress is not None:
                progress(BACKING_UP, 0, 0)
            self.guard("bulk-forget")
        if progress is not None:
            progress(FORGETTING, 0, 0)
        removed = self.store.delete([m.id for m in targets])
        if progress is not None:  # committed: from here on they are gone, whatever stops the rest
            progress(RECORDING, len(removed), len(removed))
        self._emit("forgotten", removed, reason)
        gone = {m.id for m in removed}
        return [m for m in shown if m.id in gone]

    def forget_own(self, *, filters: Filters | None = None, dry_run: bool = False,
                   reason: str | None = None) -> list[Memory]:
        """Forget every memory this view owns: its agent's scope and its session's, narrowed by
        ``filters`` (``Filters(include_superseded=True)`` for superseded ones too). What clearing a
        framework's memory means. Global memories belong to every agent and another agent's are
        not this one's, so neither is touched, unlike ``forget``, which removes whatever this view
        can see. A bulk forget: the backup is taken first, each memory goes to the audit trail
        with ``reason``. Returns what was (or, dry run, would be) removed."""
        self.writes.refuse_when_closed()
        return self._delete(self._own(filters or Filters()), bulk=True, dry_run=dry_run, reason=reason)

    def _own(self, filters: Filters) -> list[Memory]:
        """The memories this view owns (its agent's scope and its session's) that ``filters`` select."""
        own = tuple(scope for scope in self.scope.visible() if scope.agent is not None)
        return self._all(replace(self._filter(filters), scopes=own)) if own else []

    def _forget_old_conversations(self, max_age_s: float) -> int:
        """Compaction's purge: forget this agent's own ``conversation`` memories last written more than
        ``max_age_s`` ago, by hygiene's rule (``Memory.written_here``: its last change, or its arrival
        here when later, so a conversation an import brought is not purged the day it arrives; and
        ``lifecycle.hygiene.protected_types``, summaries and items, are kept); returns how many. A bulk
        forget, as ``forget_own`` is."""
        self.writes.refuse_when_closed()
        now = self.clock()
        # The hygiene job's protected types: what it never purges, this purge keeps too.
        protected = set(PROTECTED_TYPES if self.settings is None else self.settings.lifecycle.hygiene.protected_types)
        # Created before the cutoff bounds it in the store's index (a memory is written here at or after
        # its creation); the last write here decides.
        created_before = self._own(Filters(category=Category.CONVERSATION, until=max(now - max_age_s, EARLIEST)))
        doomed = [m for m in created_before if now - m.written_here > max_age_s and m.type not in protected]
        return len(self._delete(doomed, bulk=True, reason="conversation compaction"))
