"""Settings of the memory folder (``[files]`` in the config file, ``ENGRAM_FILES__*`` in the environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from engram.settings_section import SettingsSection


class FilesSettings(SettingsSection):
    """Where the memory folder is and how it is written.

    ``enabled``: interfaces attach the database→files writer at start-up, so every change made
    through them is reflected in the folder at once (ClawCode's ``file_sync.enabled``).
    """

    enabled: bool = True
    # Empty means ``<home>/memory``.
    dir: Path | None = None
    format: Literal["markdown", "yaml"] = "markdown"
    # Which file a new memory goes to: its first tag (falling back to its category), its
    # category, or its type. Entries moved by hand stay where they were put.
    group_by: Literal["tag", "category", "type"] = "tag"
    # Also keep every memory as ``types/<type>/YYYY-MM-DD_HH-ii-ss_<id>.json`` (PHP entity).
    type_json: bool = False
    # Where a session's memories go: sessions/<agent>/<session>/ ("agent/session"), or ClawCode's
    # sessions/<session>/ for one agent's ("session": the first the folder is synced for with it,
    # recorded in the folder; other agents' stay nested). Switch on a new folder, or move
    # sessions/<agent>/<session>/ folders by hand first.
    session_folders: Literal["agent/session", "session"] = "agent/session"
    # Files larger than this are refused with a message instead of being read.
    max_file_bytes: int = Field(5_000_000, ge=1024)
    # A sync that would forget more than this share of a scope's synced memories (or every memory
    # of a file) backs the database up first and says so.
    max_forget_share: float = Field(0.5, ge=0.0, le=1.0)
    # The watcher waits this long after the last change before syncing (editors write in bursts).
    debounce_s: float = Field(0.25, ge=0.0, le=60.0)
    # ``engram watch`` also runs a full pass this often, to pick up writes of other processes.
    # Finite (as every section's floats, ``SettingsSection``): it is the watcher's wait timeout, and
    # threading refuses an infinite one.
    poll_interval_s: float = Field(5.0, ge=0.5)

    def folder(self, home: Path) -> Path:
        """The memory folder for this engram home."""
        return (self.dir or home / "memory").expanduser()

    def synced_folder(self, home: Path) -> Path | None:
        """The memory folder engram keeps in step with the store (``folder``), or None while
        ``enabled`` is off: then nothing mirrors into it and nothing syncs it on its own."""
        return self.folder(home) if self.enabled else None
