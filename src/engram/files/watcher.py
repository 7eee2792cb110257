"""Continuous sync: a watchdog observer on the memory folder.

File events only mark scope folders dirty; a worker thread waits until the folder has been quiet
for ``debounce_s`` (editors save in bursts: temporary file, rename, chmod) and then syncs each
dirty scope folder as a whole, so a bullet moved between two files of a scope is seen as a move,
not a delete and an add. The sync's own writes come back as events too; they find nothing to do.
Every ``poll_interval_s`` a full pass also runs, which picks up database changes made by other
processes (events only reach listeners in the process that wrote).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import MissingDependencyError, ValidationError

from . import layout
from .paths import PathRefused
from .state import HandedOver
from .sync import FileSync, SyncReport

if TYPE_CHECKING:
    from .every_database import EveryDatabaseSync

log = logging.getLogger("engram.files")


def _scope_dir_of(rel: str, folders: layout.Layout) -> str | None:
    """The scope folder a changed path belongs to: a file's folder, a scope folder itself (made,
    removed or renamed), or the scope folder above a deeper path (its sync reports it)."""
    found = folders.dir_of(rel)
    if found is not None:
        return found
    try:
        folders.scope_of_dir(rel)
        return rel
    except ValidationError:
        pass
    parts = rel.split("/")
    if parts[0] == "global":
        return "global"
    if parts[0] == "agents" and len(parts) >= 2:
        return "/".join(parts[:2])
    if parts[0] == "sessions" and len(parts) >= 3:
        return "/".join(parts[:3])
    return None


class Watcher:
    """Watch ``syncer``'s folder and sync on change. Use as a context manager or start()/stop()."""

    def __init__(
        self,
        syncer: FileSync | EveryDatabaseSync,
        *,
        debounce_s: float = 0.25,
        poll_interval_s: float | None = None,
        on_report: Callable[[SyncReport], None] | None = None,
    ) -> None:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise MissingDependencyError("watching the memory folder", "files", "watchdog") from exc
        self.syncer = syncer
        self.debounce_s = debounce_s
        self.poll_interval_s = poll_interval_s
        self.on_report = on_report
        self._dirty: set[str] = set()
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stopping = False
        self.passes = 0  # completed sync passes (tests and status output read it)
        # Why the watcher stopped by itself: the folder's sync state went to another store (engram migrate).
        self.handed_over: HandedOver | None = None
        watcher = self

        class Handler(FileSystemEventHandler):  # type: ignore[misc]
            def on_any_event(self, event: Any) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                for path in (getattr(event, "src_path", ""), getattr(event, "dest_path", "")):
                    if path:
                        watcher._mark(str(path))

        self._observer = Observer()
        self._observer.schedule(Handler(), str(syncer.folder.root), recursive=True)
        self._thread = threading.Thread(target=self._run, name="engram-files-watcher", daemon=True)

    def _mark(self, path: str) -> None:
        try:
            rel = self.syncer.folder.relative(Path(path))
        except PathRefused:  # an event outside the folder (a rename away): nothing of ours
            return
        name = rel.rsplit("/", 1)[-1]
        if name.startswith(".") or name.endswith(".conflict") or name.upper() == layout.OPERATOR_FILE.upper():
            return
        scope_dir = _scope_dir_of(rel, self.syncer.layout)
        if scope_dir is None:
            return
        with self._cond:
            self._dirty.add(scope_dir)
            self._last_event = time.monotonic()
            self._cond.notify()

    def start(self) -> Watcher:
        self._observer.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._thread.join(timeout=10)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        next_poll = time.monotonic() + (self.poll_interval_s or 0)
        while True:
            with self._cond:
                while not self._stopping:
                    now = time.monotonic()
                    quiet = now - self._last_event >= self.debounce_s
                    if self._dirty and quiet:
                        break
                    if self.poll_interval_s and now >= next_poll:
                        break
                    wait = self.debounce_s if self._dirty else (next_poll - now if self.poll_interval_s else None)
                    self._cond.wait(timeout=wait)
                if self._stopping:
                    return
                dirty, self._dirty = self._dirty, set()
            try:
                if self.poll_interval_s and time.monotonic() >= next_poll:
                    report = self.syncer.sync()
                    next_poll = time.monotonic() + self.poll_interval_s
                else:
                    report = self.syncer.sync_dirs(sorted(dirty))
            except HandedOver as exc:  # no pass will succeed again: stop rather than retry
                # The owner reports it (``handed_over``: `engram watch` exits with it as its error);
                # logged as an error here too, the message was shown twice.
                log.debug("%s; watcher stopped", exc)
                self.handed_over = exc
                return
            except Exception:  # the watcher must outlive one bad pass; the next event retries
                log.exception("memory folder sync failed")
                continue
            self.passes += 1
            if self.on_report is not None:
                self.on_report(report)
