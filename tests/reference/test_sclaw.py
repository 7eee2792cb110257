"""sclaw (reference 001) behaviours: history assembly on a real SQLite file; its YAML configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    # opened for that agent." Its `path` is sclaw's database: engram keeps its own in its home
    # and creates nothing there (it once created its own database at sclaw's path).
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
    assert (tmp_path / "home" / "memory.db").is_file() and not db.parent.exists()
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
    import sqlite3

    from engram import foreign_settings
    from engram.config import load_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")
    monkeypatch.setenv("SCLAW_DATA", str(tmp_path / "data"))
    config = tmp_path / "sclaw.yaml"
    config.write_text("modules:\n  memory.sqlite:\n    busy_timeout: 5000\n    wal: true\n")
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    assert load_settings().busy_timeout_ms == 5000 and caplog.records == []

    config.write_text("data_dir: ${SCLAW_DATA}\nmodules:\n  memory.sqlite:\n    wal: false\n")
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
    with sqlite3.connect(tmp_path / "home" / "memory.db") as conn:  # ENGRAM_HOME beats data_dir's engram/
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


def _sclaw_data_dir(root: Path) -> Path:
    """sclaw's data_dir as the reference lays it out: ``{data_dir}/memory.db`` (the memory.sqlite
    module, WAL mode) and ``{data_dir}/agents/{agent}/memory.db`` (per-agent stores)."""
    import sqlite3

    from tests.importers.test_import_sqlite_sources import SCLAW_ROWS, SCLAW_SCHEMA

    data = root / "sclaw-data"
    for db in (data / "memory.db", data / "agents" / "assistant" / "memory.db"):
        db.parent.mkdir(parents=True)
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCLAW_SCHEMA + SCLAW_ROWS)
        conn.commit()
        conn.close()
    return data


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (its path from there) and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _engram(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def _sclaw_env(tmp_path: Path, config: Path) -> dict[str, str]:
    """A user's shell with only sclaw's YAML: no ENGRAM_* variable, and a HOME of its own (so
    ``~/.engram`` is watched too)."""
    user = tmp_path / "user"
    user.mkdir()
    return {**{k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "AGENT_BRIDGE_HOME"))},
            "HOME": str(user), "ENGRAM_CONFIG": str(config), "ENGRAM_EMBEDDINGS__PROVIDER": "none",
            "COLUMNS": "200"}


def test_engram_on_sclaws_yaml_keeps_its_files_in_data_dir_engram_and_never_touches_sclaws(tmp_path: Path) -> None:
    # sclaw: "a single database is created at the configured `path` (defaults to `{data_dir}/memory.db`)";
    # per-agent ones at `{data_dir}/agents/{agent_name}/memory.db`. engram's own files go to
    # `{data_dir}/engram/` and sclaw's stay byte for byte as they were (none added beside them).
    data = _sclaw_data_dir(tmp_path)
    config = tmp_path / "sclaw.yaml"
    config.write_text(f"data_dir: {data}\nmodules:\n  memory.sqlite:\n    path: {data / 'memory.db'}\n"
                      "    busy_timeout: 5000\n")
    sclaws = _snapshot(data)
    env = _sclaw_env(tmp_path, config)

    stored = _engram(env, "remember", "Tickets close after 7 days")
    assert stored.returncode == 0, stored.stderr
    assert "is sclaw's database and is not opened as engram's" in stored.stderr  # said, not silently dropped
    found = _engram(env, "--json", "recall", "tickets")
    assert found.returncode == 0, found.stderr
    assert [hit["memory"]["content"] for hit in json.loads(found.stdout)["hits"]] == ["Tickets close after 7 days"]
    per_agent = _engram(env, "--agent", "assistant", "remember", "The assistant answers in English")
    assert per_agent.returncode == 0, per_agent.stderr
    imported = _engram(env, "import", str(data / "memory.db"))
    assert imported.returncode == 0, imported.stderr
    facts = _engram(env, "--json", "recall", "dark mode")
    assert "User prefers dark mode" in [hit["memory"]["content"] for hit in json.loads(facts.stdout)["hits"]]

    home = data / "engram"
    assert (home / "memory.db").is_file() and (home / "memory").is_dir()  # the database and the memory folder
    assert {k: v for k, v in _snapshot(data).items() if not k.startswith("engram/")} == sclaws
    assert not (tmp_path / "user" / ".engram").exists()


def test_data_dir_alone_works_and_engrams_path_on_sclaws_database_is_refused_unchanged(tmp_path: Path) -> None:
    # With sclaw's `data_dir` alone engram's database was `{data_dir}/memory.db`, sclaw's own, and
    # every command stopped. Naming sclaw's file as engram's `path` still does, through the guard
    # (db.foreign.refuse_foreign), before anything changes it.
    data = _sclaw_data_dir(tmp_path)
    config = tmp_path / "sclaw.yaml"
    config.write_text(f"data_dir: {data}\n")
    sclaws = _snapshot(data)
    env = _sclaw_env(tmp_path, config)

    stored = _engram(env, "remember", "Tickets close after 7 days")
    assert stored.returncode == 0, stored.stderr
    assert (data / "engram" / "memory.db").is_file()
    refused = _engram({**env, "ENGRAM_PATH": str(data / "memory.db")}, "remember", "Tickets close after 7 days")
    assert refused.returncode != 0
    assert f"{data / 'memory.db'} is a sclaw database (facts, messages), not engram's" in refused.stderr
    assert {k: v for k, v in _snapshot(data).items() if not k.startswith("engram/")} == sclaws


def test_set_summary_over_http_replaces_the_summary_as_sclaws_store_does(served) -> None:  # noqa: ANN001 - a fixture
    # sclaw's HistoryStore: "SetSummary | Stores a compaction summary, replacing any previous one" and
    # "GetSummary | Returns the stored summary (empty string if none)". The HTTP door read a summary
    # but had no way to set one, which the library (set_summary) and the CLI (history summary --set) have.
    with served.client(served.alice) as c:
        assert c.get("/api/v1/history/telegram:42/summary").json()["summary"] == ""
        first = c.put("/api/v1/history/telegram:42/summary", json={"summary": "The user greeted us."})
        assert first.status_code == 200, first.text
        assert first.json() == {"conversation": "telegram:42", "summary": "The user greeted us.", "warnings": []}
        c.put("/api/v1/history/telegram:42/summary", json={"summary": "The user asked about dogs."})
        assert c.get("/api/v1/history/telegram:42/summary").json()["summary"] == "The user asked about dogs."
        # A blank summary is refused naming it (History.set_summary's rule), the summary kept; DELETE removes it.
        for blank in ("", "  \n"):
            refused = c.put("/api/v1/history/telegram:42/summary", json={"summary": blank})
            assert refused.status_code == 422 and refused.json()["field"] == "summary", refused.text
        assert c.get("/api/v1/history/telegram:42/summary").json()["summary"] == "The user asked about dogs."
        cleared = c.delete("/api/v1/history/telegram:42/summary")
        assert cleared.status_code == 200 and cleared.json() == {"conversation": "telegram:42", "summary": "", "cleared": True}
        assert c.get("/api/v1/history/telegram:42/summary").json()["summary"] == ""
        for body, field in (({}, "summary"), ({"summary": 7}, "summary"), ({"summary": "x", "extra": 1}, "extra")):
            refused = c.put("/api/v1/history/telegram:42/summary", json=body)
            assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
    with served.client(served.bob) as c:  # one agent never reads another's conversation
        assert c.get("/api/v1/history/telegram:42/summary").json()["summary"] == ""


def test_an_agent_with_memory_disabled_keeps_no_conversation_history(tmp_path: Path) -> None:
    # sclaw: `agents: <agent>: memory: enabled` is "Whether memory (history persistence) is enabled
    # for this agent"; with false "ResolveHistory returns nil and no SQLite database is opened for that
    # agent". engram opened the disabled memory backend but still kept the agent's conversations in its
    # database: every message an agent with memory off was sent was written to disk.
    config = tmp_path / "sclaw.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\nagents:\n  support:\n    memory:\n      enabled: false\n")
    env = _sclaw_env(tmp_path, config)

    appended = _engram(env, "--agent", "support", "--json", "history", "append", "telegram:42", "--role", "user",
                       "my card number is private")
    assert appended.returncode == 0, appended.stderr
    assert json.loads(appended.stdout)["stored"] is False
    shown = _engram(env, "--agent", "support", "--json", "history", "show", "telegram:42")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["messages"] == []
    # Another agent of the same file keeps its history, as in sclaw.
    kept = _engram(env, "--agent", "assistant", "--json", "history", "append", "telegram:42", "--role", "user", "hi")
    assert json.loads(kept.stdout)["stored"] is True, kept.stderr
