"""Fixtures for the memory-folder tests: a real SQLite file in tmp_path and a real folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from engram.engine import Engram
from engram.files.sync import FileSync


@pytest.fixture
def engram(tmp_path: Path):
    # The tests attach (and detach) their own syncer: the mirror from_settings attaches is off.
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as instance:
        yield instance


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "home" / "memory"


@pytest.fixture
def syncer(engram: Engram, folder: Path) -> FileSync:
    sync = FileSync(engram, folder)
    sync.attach()
    yield sync
    sync.detach()


@pytest.fixture(params=["markdown", "yaml"])
def fmt(request: pytest.FixtureRequest) -> str:
    return request.param


class TwoProcesses(NamedTuple):
    mine: FileSync  # this process's mirror, on the ``engram`` fixture
    other: Engram  # another process's engine on the same home
    theirs: FileSync  # its mirror of the same folder


@pytest.fixture
def two_processes(engram: Engram, folder: Path, tmp_path: Path) -> Iterator[TwoProcesses]:
    """Two mirrors of one folder, each with its own engine (as two processes), both attached."""
    mine = FileSync(engram, folder)
    mine.attach()
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as other:
        theirs = FileSync(other, folder)
        theirs.attach()
        try:
            yield TwoProcesses(mine, other, theirs)
        finally:
            theirs.detach()
            mine.detach()


def run_cli(home: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` as a process on ``home`` (no embedder; wide, so no line is wrapped; ``settings``
    as further environment variables), asserted to succeed; the environment's own engram settings
    left out."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "300", **settings}
    for name in ("ENGRAM_CONFIG", "ENGRAM_BACKEND", "ENGRAM_PATH", "ENGRAM_AGENT", "ENGRAM_DATABASE_URL"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def held_in_files(engram: Engram) -> dict[str, dict]:
    """Every memory as a dict, but for when its database received it (``received_at``): the files do
    not carry it, and a folder read into a fresh database arrives there then
    (``test_files_roundtrip.test_a_folder_read_into_a_fresh_database_arrives_then``)."""
    return {m.id: {k: v for k, v in m.to_dict().items() if k != "received_at"} for m in engram.store.iter_all()}


def entry_block(text: str, entry_id: str) -> list[str]:
    """The lines of the entry ``entry_id`` in a memory file (a markdown bullet or a YAML list item):
    the one whose own id it is (``id:ID``, ``id: ID``), not one that links to it (``links:ID``)."""
    lines = text.split("\n")
    own = re.compile(rf"(?<![\w-])id: ?{re.escape(entry_id)}")
    start = next(i for i, line in enumerate(lines) if line.startswith("- ") and own.search(line))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines))
    return lines[start:end]


def with_copy(text: str, copy: list[str]) -> str:
    """A memory file's ``text`` with ``copy`` added as its last entry."""
    return text.rstrip("\n") + "\n" + "\n".join(copy) + "\n"
