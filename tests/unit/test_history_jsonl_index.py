"""The exchange index of a JSONL history (semantic history search) lives in engram's home, not
beside the JSONL file, which may be another program's (Clawless's ~/.clawless/): real files, a
real SQLite index, the real CLI in a subprocess with an embedding provider over a real socket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from engram.config import load_settings
from engram.db.migrate import migrate
from engram.db.sqlite import Database
from engram.engine import Engram
from engram.history.semantic import ExchangeIndex
from engram.model import Exchange
from engram.root import open_history
from engram.testing.fakes import HashingEmbedder
from engram.testing.provider_servers import ProviderServer

CLAWLESS_LINES = [
    {"userMessage": "recommend a pasta recipe", "botResponse": "Try carbonara with guanciale.",
     "chatId": "42", "platform": "telegram", "timestamp": "2026-02-09T10:00:00.000Z"},
    {"userMessage": "how tall is mount everest", "botResponse": "About 8849 metres.",
     "chatId": "42", "platform": "telegram", "timestamp": "2026-02-09T10:01:00.000Z"},
]


def _clawless_file(tmp_path: Path) -> Path:
    path = tmp_path / ".clawless" / "conversation-history.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line) + "\n" for line in CLAWLESS_LINES), encoding="utf-8")
    return path


def _env(home: Path, history_file: Path, embeddings_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update({"ENGRAM_HOME": str(home), "ENGRAM_FILES__ENABLED": "false",
                "ENGRAM_HISTORY__BACKEND": "jsonl", "ENGRAM_HISTORY__PATH": str(history_file),
                "ENGRAM_EMBEDDINGS__PROVIDER": "ollama", "ENGRAM_EMBEDDINGS__MODEL": "nomic-embed-text",
                "ENGRAM_EMBEDDINGS__BASE_URL": embeddings_url})
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    code = "from engram.interfaces.cli.app import main; main()"
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_opening_listing_and_showing_a_clawless_history_leaves_nothing_beside_its_file(tmp_path: Path) -> None:
    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    with ProviderServer(api_key=None) as embeddings:
        env = _env(home, history_file, embeddings.url)
        assert "telegram:42" in _cli(env, "history", "list").stdout
        shown = json.loads(_cli(env, "--json", "history", "show", "telegram:42").stdout)
        assert [m["content"] for m in shown["messages"]][:2] == ["recommend a pasta recipe", "Try carbonara with guanciale."]
        assert embeddings.requests, "the history was opened without its exchange index: nothing here was tested"
        assert sorted(p.name for p in history_file.parent.iterdir()) == ["conversation-history.jsonl"]
        indexes = sorted((home / "state").glob("jsonl-*.exchanges.db"))
        assert len(indexes) == 1

        # Semantic history search still works, from the index in the home, through the library.
        settings = load_settings(home=home, files={"enabled": False},
                                 history={"backend": "jsonl", "path": str(history_file)},
                                 embeddings={"provider": "ollama", "model": "nomic-embed-text", "base_url": embeddings.url})
        with Engram.from_settings(settings) as engram:
            found = engram.history.semantic_recall("pasta recipe carbonara", key="telegram:42", top_k=1)
            assert [e.user for e in found.exchanges] == ["recommend a pasta recipe"]
            engram.history.append("telegram:42", "user", "and a dessert?")
            engram.history.append("telegram:42", "assistant", "Tiramisu.")
            found = engram.history.semantic_recall("dessert tiramisu", key="telegram:42", top_k=1)
            assert [e.assistant for e in found.exchanges] == ["Tiramisu."]
    # A write makes the JSONL store's own lock file (documented); the index stays in the home.
    assert not any(".exchanges.db" in p.name for p in history_file.parent.iterdir())
    assert sorted((home / "state").glob("jsonl-*.exchanges.db")) == indexes


def test_an_index_an_earlier_version_made_beside_the_file_is_still_used_where_it_is(tmp_path: Path) -> None:
    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    earlier = history_file.with_name(history_file.name + ".exchanges.db")
    db = Database(earlier)
    migrate(db)
    # An exchange the JSONL file no longer holds (its FIFO dropped it): only the earlier index has it.
    ExchangeIndex(db, HashingEmbedder(), agent="default").add(
        [Exchange("telegram:42:", "which train goes to the airport", "The S-Bahn line 8.", 1_770_000_000.0)])
    db.close()
    settings = load_settings(home=home, files={"enabled": False}, embeddings={"provider": "none"},
                             history={"backend": "jsonl", "path": str(history_file)})
    history = open_history(settings, "default", embedder=HashingEmbedder())
    try:
        found = history.semantic_recall("train airport", key="telegram:42", top_k=1)
        assert [e.user for e in found.exchanges] == ["which train goes to the airport"]
        assert history.semantic is not None and history.semantic.count() == 3  # the file's two added to it
    finally:
        history.close()
    assert not list(home.rglob("*.exchanges.db"))  # no second index made in the home
