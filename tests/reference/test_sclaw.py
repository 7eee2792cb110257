"""sclaw (reference 001) behaviours: history assembly on a real SQLite file; its YAML configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.history.service import History
from engram.history.sqlite import SqliteHistoryStore
from engram.model import Role


def test_assemble_puts_one_system_prompt_first_then_the_summary(tmp_path: Path) -> None:
    # sclaw: "The summary is stored via `SetSummary` and prepended as a system message on the next
    # assembly pass" - after the system prompt, and a new system prompt replaces the stored one.
    store = SqliteHistoryStore.open(tmp_path / "memory.db")
    try:
        history = History(store)
        history.append("telegram:42", "system", "You are a careful assistant.")
        history.append("telegram:42", "user", "hello")
        store.set_summary("telegram:42:", "The user greeted us.")
        fresh = history.assemble("telegram:42", "SYS")
        assert [m.role for m in fresh] == [Role.SYSTEM, Role.SYSTEM, Role.USER]
        assert fresh[0].content == "SYS" and "The user greeted us." in fresh[1].content
        kept = history.assemble("telegram:42")
        assert kept[0].content == "You are a careful assistant." and kept[2].content == "hello"
    finally:
        store.close()


SCLAW_YAML = """
modules:
  memory.sqlite:
    path: "{path}"
    wal: true
    busy_timeout: 5000
agents:
  assistant:
    memory:
      enabled: false   # default: true when omitted
"""


def test_sclaw_yaml_config_carries_over(tmp_path: Path) -> None:
    # sclaw: "The SQLite memory module is configured under the `modules` section with the key
    # `memory.sqlite`" (path, busy_timeout); "When `enabled` is `false` ... no SQLite database is
    # opened for that agent."
    import os
    import subprocess
    import sys

    db = tmp_path / "data" / "memory.db"
    config = tmp_path / "sclaw.yaml"
    config.write_text(SCLAW_YAML.format(path=db))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
           "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_CONFIG": str(config)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    stored = run("--agent", "support", "remember", "Tickets close after 7 days")
    assert stored.returncode == 0, stored.stderr
    assert db.is_file()
    off = run("--agent", "assistant", "--json", "stats")
    assert off.returncode == 0, off.stderr
    assert json.loads(off.stdout)["backend"] == "disabled"
    from engram.config import load_settings

    os.environ["ENGRAM_CONFIG"] = str(config)
    try:
        assert load_settings().busy_timeout_ms == 5000
    finally:
        del os.environ["ENGRAM_CONFIG"]


def test_sclaw_wal_false_is_reported_once_and_wal_kept(tmp_path: Path, monkeypatch, caplog) -> None:
    # sclaw: "`wal` | `*bool` | `true` | Enable WAL journal mode for concurrent reads". engram always
    # keeps WAL (several processes write one file): `wal: false` is said, not silently dropped.
    import logging
    import os
    import sqlite3
    import subprocess
    import sys

    from engram import foreign_settings
    from engram.config import load_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")
    monkeypatch.setenv("SCLAW_DATA", str(tmp_path / "data"))
    config = tmp_path / "sclaw.yaml"
    config.write_text("modules:\n  memory.sqlite:\n    path: ${SCLAW_DATA}/memory.db\n    wal: true\n")
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    assert load_settings().path == tmp_path / "data" / "memory.db" and caplog.records == []

    config.write_text("modules:\n  memory.sqlite:\n    path: ${SCLAW_DATA}/memory.db\n    wal: false\n")
    load_settings()
    load_settings()
    assert [r.getMessage() for r in caplog.records] == [
        "modules.memory.sqlite.wal: false is not followed: engram keeps SQLite in WAL mode, so readers never wait "
        "for the writer and several processes can write one file without 'database is locked'"]

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")},
           "ENGRAM_HOME": str(tmp_path / "home"), "ENGRAM_CONFIG": str(config), "COLUMNS": "200"}
    stored = subprocess.run([sys.executable, "-m", "engram", "remember", "Tickets close after 7 days"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert stored.returncode == 0, stored.stderr
    assert "modules.memory.sqlite.wal: false is not followed" in stored.stderr  # the command line shows it
    with sqlite3.connect(tmp_path / "data" / "memory.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.mark.parametrize("agents", ['agents:\n  assistant: "yes"\n', "agents: [assistant]\n",
                                    "agents:\n  assistant:\n    memory: off\n"])
def test_an_agents_block_of_another_shape_is_not_sclaws_and_starts(tmp_path: Path, agents: str) -> None:
    # A file whose `agents` is not sclaw's {<agent>: {memory: {enabled}}} is read for the rest (it crashed
    # with "internal error: AttributeError" before any command ran).
    import subprocess
    import sys

    config = tmp_path / "other.yaml"
    config.write_text(agents + "modules:\n  memory.sqlite:\n    busy_timeout: 5000\n")
    done = subprocess.run([sys.executable, "-m", "engram", "--home", str(tmp_path / "home"), "--config", str(config),
                           "--agent", "assistant", "--json", "stats"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["backend"] == "sqlite"
