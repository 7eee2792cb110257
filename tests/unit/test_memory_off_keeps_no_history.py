"""Memory turned off (``backend = "disabled"``) keeps no conversations either, unless
``history.backend`` names a store: the reference's memory off is "no errors, no facts, no
persistence" (sclaw, reference 001), its history tier included. Conversations were kept in a
``memory.db`` (an agent's own with ``per_agent_databases``) made for an agent that stores nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.history.service import MEMORY_OFF


def _files(home: Path) -> list[str]:
    return sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file()) if home.exists() else []


@pytest.mark.parametrize("per_agent", [False, True])
def test_an_agent_with_memory_off_stores_no_conversation_and_makes_no_file(tmp_path: Path, per_agent: bool) -> None:
    home = tmp_path / "home"
    settings = load_settings(home=home, agent="bob", backend="disabled", per_agent_databases=per_agent,
                             files={"enabled": False})
    engram = Engram.from_settings(settings)
    try:
        engram.remember("bob drinks tea", key="drink")
        done = engram.history.append_reported("web:1", "user", "hello")
        assert done.stored is False and done.messages[0].content == "hello"  # answered, not kept
        engram.history.set_summary("web:1", "a chat about tea")
        assert engram.history.all("web:1") == [] and engram.history.summary("web:1") == ""
        assert engram.history.conversations() == [] and engram.history.off_reason == MEMORY_OFF
        carol = engram.for_agent("carol")  # another agent of the same process: the same switch
        assert carol.history.append_reported("web:2", "user", "hi").stored is False
        assert carol.history.all("web:2") == []
    finally:
        engram.close()
    assert _files(home) == []


def test_history_backend_set_keeps_conversations_with_memory_off(tmp_path: Path) -> None:
    # Asked for by name, a history store is kept: only the default follows the memory switch.
    home = tmp_path / "home"
    settings = load_settings(home=home, agent="bob", backend="disabled", history={"backend": "sqlite"},
                             files={"enabled": False})
    engram = Engram.from_settings(settings)
    try:
        assert engram.history.append_reported("web:1", "user", "hello").stored is True
        assert [m.content for m in engram.history.all("web:1")] == ["hello"]
    finally:
        engram.close()
    assert _files(home) == ["memory.db"]


def test_the_cli_says_why_an_append_was_not_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_BACKEND": "disabled", "COLUMNS": "200"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    said = run("history", "append", "web:1", "--role", "user", "hello")
    assert said.returncode == 0, said.stderr
    assert f"not appended to web:1: {MEMORY_OFF}" in said.stderr
    shown = run("--json", "history", "show", "web:1")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["messages"] == []
    assert not (home / "memory.db").exists()
