"""Files beside an encrypted store that are not the database: with ``privacy.encryption_key`` set,
the chat's response cache (``chat.response_cache``) is kept in memory, never as the plain
``response_cache.json`` it used to be, and the ``jsonl`` history backend, which cannot encrypt, is
refused as the ``jsonfile`` memory backend is (it used to write every message in clear)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlcipher3", reason="encryption at rest needs the lifecycle extra (sqlcipher3-binary)")

from engram.testing.llm_servers import OpenAICompatServer, RecordedRequest, Reply  # noqa: E402

KEY = "correct horse battery staple"
SECRET = "the payroll archive sits behind door seven"


def _engram(home: Path, *args: str, stdin: str = "", **settings: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_PRIVACY__ENCRYPTION_KEY": KEY,
           "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "200", **settings}
    return subprocess.run([sys.executable, "-m", "engram", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=180)


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.parametrize("cache", ["true", "false"])  # a plain file from before goes either way
def test_with_a_key_the_response_cache_stays_in_memory_and_a_plain_one_is_deleted(
        isolated_home: Path, cache: str) -> None:
    home = isolated_home
    home.mkdir(parents=True)
    # A cache written before the key was set holds an earlier answer in clear.
    earlier = home / "response_cache.json"
    earlier.write_text(json.dumps([{"key": "0" * 16, "response": "earlier answer: the safe is in the attic",
                                    "timestamp": 0.0, "last_access": 0.0, "scope": ""}]))

    def answer(request: RecordedRequest) -> Reply:
        return Reply.say(f"I remember: {SECRET}.")

    with OpenAICompatServer(responder=answer) as server:
        run = _engram(home, "chat", stdin="Where is the payroll archive?\nWhere is the payroll archive?\n",
                      ENGRAM_LLM__PROVIDER="openai", ENGRAM_LLM__MODEL="m", ENGRAM_LLM__API_KEY="x",
                      ENGRAM_LLM__BASE_URL=server.base_url, ENGRAM_CHAT__RESPONSE_CACHE=cache,
                      ENGRAM_CHAT__SYNTHESIS="false", ENGRAM_CHAT__EXTRACTOR="none")
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.count(SECRET) == 2
    # The answer is nowhere on disk in clear (the conversation is in the encrypted database).
    assert _files_holding(home, SECRET.encode()) == []
    assert not earlier.exists()
    assert "deleted the plain-text response cache" in run.stderr


def test_without_a_key_the_response_cache_is_still_a_file(isolated_home: Path) -> None:
    with OpenAICompatServer(Reply.say(f"I remember: {SECRET}.")) as server:
        run = _engram(isolated_home, "chat", stdin="Where is the payroll archive?\n",
                      ENGRAM_PRIVACY__ENCRYPTION_KEY="", ENGRAM_LLM__PROVIDER="openai", ENGRAM_LLM__MODEL="m",
                      ENGRAM_LLM__API_KEY="x", ENGRAM_LLM__BASE_URL=server.base_url,
                      ENGRAM_CHAT__RESPONSE_CACHE="true", ENGRAM_CHAT__SYNTHESIS="false",
                      ENGRAM_CHAT__EXTRACTOR="none")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "response_cache.json" in [p.name for p in _files_holding(isolated_home, SECRET.encode())]


def test_a_key_with_the_jsonl_history_backend_is_refused_before_anything_is_written(isolated_home: Path) -> None:
    run = _engram(isolated_home, "history", "append", "telegram:42", SECRET, ENGRAM_HISTORY__BACKEND="jsonl")
    assert run.returncode == 4, run.stdout + run.stderr
    said = " ".join(run.stderr.split())
    assert "'jsonl' history backend cannot encrypt" in said and "history.backend" in said
    assert not isolated_home.exists() or _files_holding(isolated_home, SECRET.encode()) == []
    assert not (isolated_home / "conversation-history.jsonl").exists()


def test_a_store_converted_as_the_docs_say_reads_back_and_its_plain_backups_are_named(isolated_home: Path) -> None:
    # The conversion privacy.md gives (SQLCipher's sqlcipher_export into a new file) leaves the
    # backups taken before as they were, in clear; nothing said so.
    home = isolated_home
    plain = {"ENGRAM_PRIVACY__ENCRYPTION_KEY": ""}
    assert _engram(home, "remember", SECRET, "--key", "payroll", **plain).returncode == 0
    assert _engram(home, "backup", **plain).returncode == 0
    import sqlcipher3.dbapi2 as sqlcipher

    db = sqlcipher.connect(str(home / "memory.db"))
    db.execute("ATTACH DATABASE ? AS encrypted KEY ?", (str(home / "memory.encrypted.db"), KEY))
    db.execute("SELECT sqlcipher_export('encrypted')")
    db.close()
    (home / "memory.encrypted.db").replace(home / "memory.db")
    assert not (home / "memory.db").read_bytes().startswith(b"SQLite format 3")

    run = _engram(home, "--json", "get", "payroll")
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(run.stdout)["content"] == SECRET
    [backup] = (home / "backups").iterdir()
    said = " ".join(run.stderr.split())
    assert "not encrypted" in said and backup.name in said
    # An encrypted backup is not named; the plain one, once deleted, is no longer either.
    backup.unlink()
    assert _engram(home, "backup").returncode == 0
    assert "not encrypted" not in _engram(home, "count").stderr


def test_a_key_with_postgresql_is_refused_naming_the_setting_that_chose_it(isolated_home: Path) -> None:
    url = "postgresql://engram:s3cret-pw@127.0.0.1:9/engram"  # refused before any connection is tried
    # The memory store on PostgreSQL, chosen by the URL alone.
    run = _engram(isolated_home, "count", ENGRAM_DATABASE_URL=url)
    assert run.returncode == 4, run.stdout + run.stderr
    said = " ".join(run.stderr.split())
    assert "cannot encrypt" in said and "ENGRAM_DATABASE_URL" in said and "s3cret" not in said
    # The memories in the encrypted SQLite file, the conversations on PostgreSQL: the setting to
    # change is history.backend (backend is "sqlite" already).
    run = _engram(isolated_home, "history", "append", "telegram:42", SECRET, ENGRAM_DATABASE_URL=url,
                  ENGRAM_BACKEND="sqlite", ENGRAM_HISTORY__BACKEND="postgres")
    assert run.returncode == 4, run.stdout + run.stderr
    said = " ".join(run.stderr.split())
    assert "history.backend" in said and "cannot encrypt" in said and "s3cret" not in said
    assert 'use backend = "sqlite"' not in said
