"""Moving memories in and out: this view's snapshot export (``visible_memories``, ``export_snapshot``)
and imports of engram's snapshots and folders and of other memory systems' data
(``import_snapshot``, ``import_from``).

The engine checks and routes; the formats are owned elsewhere: ``engram.snapshot`` reads and writes
engram's snapshot, ``engram.importers`` detects and reads the others and applies their plan,
``files.export`` reads a memory folder, and ``engram.bulk`` stores an import while the model embeds
it. An import is screened by the PII policy as ``remember`` screens, never brings back what this
agent erased (``erase.without_erased``), and never reads the memory folder the file mirror itself
keeps (``_synced_folder``).

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from engram import snapshot
from engram.bulk import store_and_embed
from engram.errors import ValidationError
from engram.model import Memory, MemoryFilter, Scope
from engram.scoping import Filters, ScopeChoice
from engram.store.base import ImportResult

if TYPE_CHECKING:
    from engram.importers.apply import ImportSummary


class _Transferring:
    """``Engram``'s exports and imports."""

    def visible_memories(self, *, scope: ScopeChoice | None = None) -> list[Memory]:
        """Every memory this view may read (or one scope's of them), superseded ones included, oldest
        first: its agent's, global ones, and its session's when it is opened for one. What this
        agent's exports hold (a snapshot, a memory folder written as this agent); the operator's
        copy of every agent's memories is ``store.iter_all()``."""
        self.writes.refuse_when_closed("read")
        # Links are kept to memories this view may read: an export is a door like any other.
        return self._shown(self._all(self._filter(Filters(include_superseded=True), scope=scope)))

    def export_snapshot(self, *, scope: ScopeChoice | None = None) -> str:
        """All visible memories (or one scope's) as a JSON snapshot; embeddings are never included."""
        return snapshot.dump(self.visible_memories(scope=scope))

    def import_snapshot(
        self, document: str | bytes, *, progress: Callable[[int, int], None] | None = None
    ) -> ImportResult:
        """Import a snapshot (engram's or PtrClaw's) into this agent. Keys or ids this agent (or
        global) already holds are skipped; memories whose ids another agent holds (with one database per
        agent, in its own database) get ids of their own; a link to an entry skipped for its key, or to a
        key or id not in the snapshot, goes to the memory stored under it for this agent (or global);
        a malformed document raises ``SnapshotError`` and imports nothing. Content, search context
        and metadata are screened for PII as ``remember`` screens them (``privacy.pii``; the
        warnings, naming each entry, in ``ImportResult.warnings``). The memories are stored
        in one transaction while the model embeds them in batches (``engram.bulk``);
        ``progress(done, total)`` follows the embedding."""
        self.writes.refuse_when_closed()
        # Agent-scoped memories join this agent (sessions kept under it); global stays global. Ids
        # another agent holds are not this agent's: such a memory gets an id of its own.
        # Screened by the PII policy as remember screens: a snapshot may come from a store kept under
        # another policy. Content stored redacted is found unchanged (redaction is idempotent).
        from engram.agent_databases import held_in_other_databases

        memories, warnings = snapshot.load_into(document, self.scope.agent, self._holders,
                                                max_content_chars=self.max_content_chars, privacy=self.privacy,
                                                elsewhere=partial(held_in_other_databases, self), keyed=self._keyed)
        from engram import erase as erase_mod
        from engram.lifecycle.imported import import_warnings

        memories, erased = erase_mod.without_erased(self, memories)
        held = {m.id for m in self.store.get_many([m.id for m in memories])} if memories else set()
        result = store_and_embed(self, memories, progress=progress)
        # The snapshot's times are kept, its memories' arrival in the store it was taken from too (a
        # restore is a move), and the lifecycle jobs count age from them: say what the next run would delete.
        stored = self.store.get_many([m.id for m in memories if m.id not in held]) if memories else []
        warnings = [*warnings, *import_warnings(self, stored, self.clock())]
        if erased:
            result = replace(result, skipped=result.skipped + erased)
        return replace(result, warnings=tuple(warnings)) if warnings else result

    def _holders(self, ids: Sequence[str]) -> dict[str, str | None]:
        """The agent holding each of ``ids`` that is stored (None for a global memory)."""
        return {m.id: m.scope.agent for m in self.store.get_many(list(ids))} if ids else {}

    def _keyed(self, scopes: tuple[Scope, ...], key: str) -> str | None:
        """The id of the stored memory with ``key`` in the first of ``scopes`` holding one (an
        import's scopes: this agent's and global, never another agent's), or None."""
        found = {m.scope: m.id for m in self.store.list(MemoryFilter(scopes=scopes, key=key, include_superseded=True),
                                                        limit=len(scopes))}
        return next((found[scope] for scope in scopes if scope in found), None)

    def import_from(
        self,
        source: str | Path | Mapping[str, str],
        kind: str | None = None,
        *,
        keep_agents: bool = True,
        operator_notes: bool = True,
        saved_memories: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> ImportSummary:
        """Import another memory system's data, or engram's own snapshot or memory folder
        (``engram.importers.KINDS``), as ``engram import`` does. ``source`` is a ``Path`` to a file
        or folder, a document's text (a ``str`` is text, never a path), or a folder as
        ``{relative path: text}``; ``kind`` is detected when omitted.

        Source users/agents become engram agents unless ``keep_agents=False`` (all join this
        agent), and a mem0 run that agent's session (``ImportSummary.agents`` and ``.sessions``
        name them). ``saved_memories=True`` (ChatGPT's export only; ``engram import --saved-memories``)
        makes ChatGPT's saved memories (its writes to the ``bio`` tool) core memories; without it
        they are counted in a warning. Idempotent per agent: what an earlier import by the same agent brought is skipped,
        and what that agent forgot since (``forgotten``) is not brought back (``ImportSummary.forgotten``).
        Malformed input raises ``SnapshotError`` naming the line or record, and nothing is
        imported; a ``source`` of another type, or a ``str`` that is a path rather than a document,
        raises ``ValidationError`` naming ``source``. An engram memory folder (kind ``folder``) is
        imported as ``engram import FOLDER`` does: its ``imported`` counts memories kept with their
        ids and new ones, its ``warnings`` the files or entries it could not read. The memory folder
        engram itself syncs (``files.dir`` while ``files.enabled``), a folder inside it or one holding
        it, is refused with ``ValidationError`` naming ``path`` before anything is stored, read as
        ``folder``, ``basic-memory`` or ``openclaw`` (whose notes are markdown files as the mirror's
        are): ``sync()`` of the file mirror (``engram sync``) takes its entries in place.
        """
        self.writes.refuse_when_closed()
        from engram import importers
        from engram.importers.apply import ImportSummary

        if kind is not None:
            # The kind first: a source is judged by what it is said to be (HTTP's ``/import/bogus``
            # with a text that is no document named ``text``, not the path's unknown ``kind``).
            importers.check_kind(kind)
        importers.check_source(source, kind)
        if kind is None:
            if isinstance(source, Path):
                kind = importers.detect(source)
            else:
                kind = importers.detect_files(source) if isinstance(source, Mapping) else importers.detect_document(source)
        importers.check_kind(kind)
        saved_memories = importers.check_saved_memories(kind, saved_memories)
        if kind == "folder":
            return self._import_folder(source)
        if kind == "snapshot":
            if isinstance(source, Mapping):
                raise ValidationError("source", "a snapshot is one document, not a folder", "a path or the document's text")
            result = self.import_snapshot(importers.read_text(source) if isinstance(source, Path) else source)
            return ImportSummary("snapshot", result.imported, result.skipped, warnings=result.warnings)
        importers.refuse_synced_folder(kind, source, self._synced_folder())
        plan = importers.read_plan(kind, source, saved_memories=saved_memories)
        return importers.apply_plan(self, plan, keep_agents=keep_agents, operator_notes=operator_notes,
                                    progress=progress)

    def _import_folder(self, source: str | Path | Mapping[str, str]) -> ImportSummary:
        """engram's own memory folder, read from disk as ``engram import FOLDER`` reads it."""
        from engram.files.export import import_folder
        from engram.importers.apply import ImportSummary

        if not isinstance(source, Path):
            raise ValidationError("source", "an engram memory folder is read from disk", "a Path to the folder")
        files = {} if self.settings is None else {"max_file_bytes": self.settings.files.max_file_bytes,
                                                  "session_folders": self.settings.files.session_folders,
                                                  "synced": self._synced_folder()}
        summary = import_folder(self, source, **files)
        return ImportSummary("folder", summary.imported + summary.created, summary.skipped,
                             warnings=tuple(str(problem) for problem in summary.problems))

    def _synced_folder(self) -> Path | None:
        """The memory folder the file mirror keeps (``files.dir`` while ``files.enabled``), which no
        import reads; None without settings or while files are off."""
        return None if self.settings is None else self.settings.files.synced_folder(self.settings.home)
