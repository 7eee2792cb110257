"""Shared test set-up: every test gets its own ENGRAM_HOME so nothing touches ~/.engram."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    home = tmp_path / "engram-home"
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    for name in ("ENGRAM_BACKEND", "ENGRAM_PATH", "ENGRAM_AGENT", "ENGRAM_SESSION", "ENGRAM_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    # The other systems' variables engram reads (a ClawCode user's MEMORY_DB_PATH would point the
    # tests at their database): tests set the ones they check.
    from engram.foreign_settings import FOREIGN_CLAWLESS, FOREIGN_ENV

    for name in (*FOREIGN_CLAWLESS, *FOREIGN_ENV):
        monkeypatch.delenv(name, raising=False)
    return home
