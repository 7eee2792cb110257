"""Encryption at rest, end to end from the command line: with ``privacy.encryption_key`` set,
memories, conversation history, the audit trail, API tokens and backups all live in the
encrypted file and work (history used to open the file without the key: IntegrityError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sqlcipher3", reason="encryption at rest needs the lifecycle extra (sqlcipher3-binary)")

KEY = "correct horse battery staple"


def engram(home: Path, *args: str, key: str | None = KEY, **settings: str) -> subprocess.CompletedProcess:
    """The CLI as a process on ``home`` with ``key`` (None: none); ``settings`` are ``ENGRAM_*``
    variables, set when given and cleared otherwise where the environment had them."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "COLUMNS": "200"}
    env.pop("ENGRAM_PRIVACY__ENCRYPTION_KEY", None)
    if key is not None:
        env["ENGRAM_PRIVACY__ENCRYPTION_KEY"] = key
    env.update(settings)
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                          timeout=180)


def ok(run: subprocess.CompletedProcess) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_history_audit_tokens_and_backups_work_on_an_encrypted_store(isolated_home: Path) -> None:
    home = isolated_home
    ok(engram(home, "remember", "The staging server is called kestrel", "--key", "staging"))
    ok(engram(home, "history", "append", "telegram:42", "Where is staging?"))
    ok(engram(home, "history", "append", "telegram:42", "On kestrel.", "--role", "assistant"))
    shown = ok(engram(home, "--json", "history", "show", "telegram:42"))
    assert "Where is staging?" in shown and "On kestrel." in shown
    token = ok(engram(home, "token", "create", "--agent", "alice")).strip().split()[-1]
    assert token.startswith("eg_")
    assert "alice" in ok(engram(home, "token", "list"))
    audit = ok(engram(home, "--json", "audit"))
    assert "staging" in audit
    ok(engram(home, "backup"))
    listed = ok(engram(home, "backup", "--list"))
    assert listed.strip()
    # Everything above is in one encrypted file: without the key nothing reads it.
    database = home / "memory.db"
    assert not database.read_bytes()[:16].startswith(b"SQLite format 3")
    refused = engram(home, "history", "show", "telegram:42", key=None)
    assert refused.returncode != 0 and "encrypt" in (refused.stdout + refused.stderr).lower()
    # The hint names both settings (the docs recommend the key file).
    assert "privacy.encryption_key_file" in " ".join((refused.stdout + refused.stderr).split())
    # With the key it all reads back: the memory, the conversation.
    found = json.loads(ok(engram(home, "--json", "recall", "staging server")))
    assert found["hits"][0]["memory"]["content"] == "The staging server is called kestrel"


def _files_holding(home: Path, needle: bytes) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_an_encrypted_store_leaves_no_plain_copy_unless_the_memory_folder_is_asked_for(
        isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The memory folder is plain markdown by design: with a key set and the folder not asked for,
    # nothing on disk holds the memory in clear (it used to be mirrored to memory/…/knowledge.md).
    secret = b"the vault combination is 4-8-15"
    ok(engram(isolated_home, "remember", secret.decode(), "--key", "vault"))
    assert _files_holding(isolated_home, b"vault combination") == []
    # Asked for explicitly, the folder is written as before (and the docs say it is plain text).
    monkeypatch.setenv("ENGRAM_FILES__ENABLED", "true")
    home = tmp_path / "asked"
    ok(engram(home, "remember", secret.decode(), "--key", "vault"))
    assert [p.name for p in _files_holding(home, secret)] == ["knowledge.md"]


def test_a_memory_folder_written_before_the_key_was_set_is_pointed_out(isolated_home: Path) -> None:
    # Written in clear first (no key yet: SQLCipher cannot encrypt that file in place, so the key
    # comes with a new home), then the same folder found beside an encrypted store.
    plain_home = isolated_home / "plain"
    ok(engram(plain_home, "remember", "the vault combination is 4-8-15", key=None))
    folder = plain_home / "memory"
    assert _files_holding(folder, b"vault combination"), "the folder should have been written in clear"
    encrypted_home = isolated_home / "encrypted"
    encrypted_home.mkdir()
    (folder).rename(encrypted_home / "memory")
    run = engram(encrypted_home, "remember", "the server is kestrel")
    ok(run)
    said = " ".join(run.stderr.split())
    assert "plain-text copies" in said and str(encrypted_home / "memory") in said
    # Left in place (it may be the user's own copy), and not written to.
    assert _files_holding(encrypted_home / "memory", b"kestrel") == []
    assert _files_holding(encrypted_home / "memory", b"vault combination")


def test_a_memory_folder_synced_on_request_is_not_pointed_out(isolated_home: Path) -> None:
    # files.enabled is off with a key, but `engram sync` writes the folder when asked: that folder
    # is the user's choice, not a copy left from before the key, so later starts say nothing.
    home = isolated_home
    ok(engram(home, "remember", "the server is kestrel"))
    ok(engram(home, "sync"))
    assert _files_holding(home / "memory", b"kestrel")
    run = engram(home, "remember", "the printer is in room 4")
    ok(run)
    assert "plain-text copies" not in " ".join(run.stderr.split())
    # A file put there afterwards by anything else is counted again.
    (home / "memory" / "notes.md").write_text("copied in\n", encoding="utf-8")
    run = engram(home, "remember", "the printer is in room 4")
    ok(run)
    said = " ".join(run.stderr.split())
    assert "plain-text copies" in said and str(home / "memory") in said


def test_a_memory_folder_exported_on_request_is_not_pointed_out(isolated_home: Path) -> None:
    # `engram export --format markdown` into the memory folder is asked for as `engram sync` is:
    # the files it wrote are not counted, and one it did not write still is.
    home = isolated_home
    ok(engram(home, "remember", "the server is kestrel"))
    (home / "memory").mkdir()
    (home / "memory" / "notes.md").write_text("left from before\n", encoding="utf-8")
    ok(engram(home, "export", "--format", "markdown", str(home / "memory")))
    assert _files_holding(home / "memory", b"kestrel")
    run = engram(home, "remember", "the printer is in room 4")
    ok(run)
    said = " ".join(run.stderr.split())
    assert "plain-text copies" in said and str(home / "memory") in said  # notes.md: not the export's
    (home / "memory" / "notes.md").unlink()
    run = engram(home, "remember", "the printer is in room 4")
    ok(run)
    assert "plain-text copies" not in " ".join(run.stderr.split())


def test_a_memory_folder_rewritten_by_conflicts_resolve_is_not_pointed_out(isolated_home: Path) -> None:
    # A conflict settled on request rewrites the folder (its sync pass): asked for, as `engram sync` is.
    home = isolated_home
    ok(engram(home, "remember", "original", "--key", "k", "--tags", "notes"))
    ok(engram(home, "sync"))
    notes = home / "memory" / "agents" / "default" / "notes.md"
    notes.write_text(notes.read_text(encoding="utf-8").replace("- original (", "- file side ("), encoding="utf-8")
    ok(engram(home, "remember", "database side", "--key", "k", "--tags", "notes"))
    ok(engram(home, "sync"))  # both changed: a conflict, the database version kept
    listed = json.loads(ok(engram(home, "--json", "conflicts")))
    assert [c["kind"] for c in listed] == ["both-changed"]
    ok(engram(home, "conflicts", "resolve", listed[0]["id"], "--take", "merge", "--content", "merged text"))
    assert b"merged text" in notes.read_bytes()
    run = engram(home, "remember", "the printer is in room 4")
    ok(run)
    assert "plain-text copies" not in " ".join(run.stderr.split())


def test_a_wrong_key_is_named_in_one_line_without_sqlciphers_own_log(isolated_home: Path) -> None:
    # SQLCipher printed three "ERROR CORE sqlcipher_page_cipher: hmac check failed ..." lines of its
    # own before engram's error.
    ok(engram(isolated_home, "remember", "The staging server is called kestrel"))
    wrong = engram(isolated_home, "list", key="not the key")
    assert wrong.returncode != 0
    assert "encryption key is wrong" in wrong.stderr
    assert "sqlcipher" not in wrong.stderr.lower() and "ERROR CORE" not in wrong.stderr, wrong.stderr
    assert "kestrel" in ok(engram(isolated_home, "list"))  # nothing was changed


def test_a_key_that_does_not_open_the_file_is_a_configuration_error(isolated_home: Path, tmp_path: Path) -> None:
    # A wrong key exited 1, as a damaged database does; it is the user's configuration: exit 4,
    # one line naming the file and the settings that hold the key.
    ok(engram(isolated_home, "remember", "The staging server is called kestrel"))
    wrong = engram(isolated_home, "list", key="not the key")
    assert wrong.returncode == 4, wrong.stdout + wrong.stderr
    assert wrong.stderr.strip().splitlines() == [
        f"error: {isolated_home / 'memory.db'}: the encryption key is wrong (privacy.encryption_key or "
        "privacy.encryption_key_file); the file opens only with the key it was made with"], wrong.stderr
    # A key set for a store made without one: configuration too, said as such.
    plain = tmp_path / "plain-home"
    ok(engram(plain, "remember", "nothing secret here", key=None))
    keyed = engram(plain, "list")
    assert keyed.returncode == 4, keyed.stdout + keyed.stderr
    assert "is not encrypted, but an encryption key is set" in keyed.stderr, keyed.stderr
    assert "nothing secret here" in ok(engram(plain, "list", key=None))  # nothing was changed
