"""Fixtures for the memory-folder tests: a real SQLite file in tmp_path and a real folder."""

from __future__ import annotations

from pathlib import Path

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
