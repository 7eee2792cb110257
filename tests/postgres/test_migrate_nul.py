"""A SQLite file holding a NUL character, which PostgreSQL cannot store (written before engram
refused one at every door: a conversation summary, an imported entity), is refused by ``engram
migrate`` before anything of it is copied, naming each such row and its column, with exit 2. It
failed mid-copy with the driver's "PostgreSQL text fields cannot contain NUL (0x00) bytes", exit 1,
naming no row, the memories before it copied. Once those rows are changed, the copy goes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import psycopg

from engram.config import load_settings
from engram.engine import Engram


def test_a_file_holding_a_nul_is_refused_naming_its_rows_before_anything_is_copied(pg_url: str,
                                                                                   tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = load_settings(home=home, agent="alice", embeddings={"provider": "none"})
    with Engram.from_settings(settings) as mem:
        for i in range(30):
            mem.remember(f"note {i} about the garden", key=f"k{i}")
        mem.history.append("web:1", "user", "hello")
        target, tagged = mem.get_by_key("k20"), mem.get_by_key("k3")
    assert target is not None and tagged is not None
    with sqlite3.connect(home / "memory.db") as raw:  # what an earlier version let through
        raw.execute("UPDATE memories SET related_entity = 'Ann' || char(0) WHERE id = ?", (target.id,))
        # In JSON text, as its escape: PostgreSQL's json cannot read it out, its jsonb refuses it. An
        # escaped backslash before "u0000" is no NUL, and copies.
        raw.execute("""UPDATE memories SET metadata = '{"a": "x\\u0000"}' WHERE id = ?""", (tagged.id,))
        raw.execute("""UPDATE memories SET metadata = '{"a": "x\\\\u0000"}' WHERE key = 'k4'""")
        raw.execute("INSERT INTO history_summaries (agent, conversation, summary, updated_at)"
                    " VALUES ('alice', 'web:1:', 'said hi' || char(0), 1.0)")

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}, "ENGRAM_HOME": str(home),
           "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    done = subprocess.run([sys.executable, "-m", "engram", "migrate", "--to", pg_url], env=env,
                          capture_output=True, text=True, timeout=180)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        f"error: --from: {home / 'memory.db'} holds 3 rows with a NUL character (\\x00), which PostgreSQL cannot store:"
        f" memories row '{tagged.id}': metadata; memories row '{target.id}': related_entity;"  # in the order written
        " history_summaries row ('alice', 'web:1:'): summary;"
        " nothing of this file was copied (allowed: text without NUL characters: change or remove those rows"
        " in the SQLite file, then run again)\n")
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)

    with Engram.from_settings(settings) as mem:  # the way out the error names
        mem.update(target, related_entity="Ann")
        mem.update(tagged, metadata={"a": "x"})
        mem.history.clear_summary("web:1")
    done = subprocess.run([sys.executable, "-m", "engram", "migrate", "--to", pg_url], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (30,)
        assert conn.execute("SELECT metadata->>'a' FROM memories WHERE key = 'k4'").fetchone() == ("x\\u0000",)
