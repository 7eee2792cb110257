"""The JSON file store: zero dependencies beyond Python, whole store in memory (PtrClaw's JsonMemory).

State lives in ``InMemoryMemoryStore`` (O(1) key lookup) and is written after every change with
an atomic replace (temp file + fsync + rename), so a crash leaves the old or the new file, never
half of one; a ``write_batch`` (the write queue's coalesced ``remember`` calls) is written once,
at its end, before it answers, and none of it is kept when that write fails; a write of it whose
vector is refused after its row was put keeps nothing of itself either (``_write_one``), and any
other change whose save fails is dropped by reading the file back (``_back_to_the_file``). Reads PtrClaw's
legacy array format and its object format (its entries the opening agent's, ``owner``); writes
``{"format": "engram-jsonfile", "entries": [...], "embedding_identity": ..., "embeddings": {id: [...]}}``.
This backend suits small-to-medium stores and one writing process.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

from engram import snapshot
from engram.errors import SnapshotError, StorageError
from engram.model import MemoryVersion, Scope
from engram.store.inmemory import InMemoryMemoryStore

log = logging.getLogger("engram.store")


class JsonFileMemoryStore(InMemoryMemoryStore):
    name = "jsonfile"
    persists = True  # its write_batch writes the file once per batch (InMemoryMemoryStore._write_each_once)

    def __init__(self, path: Path | str, *, max_content_chars: int = 1_000_000, owner: Scope | None = None) -> None:
        """``owner``: the scope the entries of a PtrClaw file (which name none) are read into - the
        agent whose memory the file is, as ``engram import`` of it makes them, so storing under one of
        their keys updates that entry (PtrClaw's upsert by key) and no other agent reads them;
        global when not given. Entries of engram's own file keep the scope each names."""
        super().__init__()
        self.path = Path(path)
        self._owner = owner or Scope()
        self._loading = True
        try:
            if self.path.exists():
                self._load(max_content_chars)
        finally:
            self._loading = False

    def _load(self, max_content_chars: int) -> None:
        try:
            raw = self.path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        if not raw.strip():
            return
        try:
            data = json.loads(raw)
            memories = snapshot.parse(data, max_content_chars=max_content_chars, default_scope=self._owner)
        except json.JSONDecodeError as exc:
            raise SnapshotError(str(self.path), f"malformed JSON: {exc.msg} (line {exc.lineno})",
                                "an engram or PtrClaw memory file") from None
        self.import_memories(memories)
        if isinstance(data, dict):
            for memory_id, versions in (data.get("versions") or {}).items():
                self._versions[memory_id] = [MemoryVersion(memory_id, v["content"], v["replaced_at"]) for v in versions]
            identity = data.get("embedding_identity")
            vectors = data.get("embeddings") or {}
            if identity and vectors:
                self.set_vectors(identity, [(i, np.asarray(v, dtype=np.float32)) for i, v in vectors.items()
                                            if i in self._rows])

    def _changed(self, content: bool = True) -> None:
        super()._changed(content)
        if not (self._loading or self._in_batch):
            try:
                self._persist()
            except StorageError:
                self._back_to_the_file()
                raise

    def _back_to_the_file(self) -> None:
        """After a failed save, the state the file still holds (the write is atomic: the old file
        is whole), so a change its caller was told failed is not written by the next save. Each
        kind of change (a store, a link, a recorded recall, a job's update) would otherwise need its
        own undo; reading the file back costs O(store) only when the disk has failed."""
        try:
            kept = JsonFileMemoryStore(self.path, owner=self._owner)
        except (StorageError, SnapshotError):
            log.exception("%s: could not be read back after a failed save; the failed change stays in memory",
                          self.path)
            return
        self._restore_state(kept._copy_state())

    def _persist(self) -> None:
        document = {
            "format": "engram-jsonfile",
            "version": 1,
            "entries": [self._out(m).to_dict() for m in self._rows.values()],
            "versions": {
                i: [{"content": v.content, "replaced_at": v.replaced_at} for v in versions]
                for i, versions in self._versions.items()
            },
        }
        if self._vectors:
            document["embedding_identity"] = self._identity
            document["embeddings"] = {i: [round(float(x), 7) for x in v] for i, v in self._vectors.items()}
        atomic_write(self.path, json.dumps(document, ensure_ascii=False))

    def location(self) -> str:
        return str(self.path)

    def _size(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0


def atomic_write(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` so readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc
