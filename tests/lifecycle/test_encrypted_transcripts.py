"""Conversation transcripts beside an encrypted store: with ``privacy.encryption_key`` set, turn
indexing (``history.transcript_auto_index``) keeps the turns as memories in the encrypted file but
writes no plain markdown transcript unless ``history.transcripts_dir`` names a folder, as the
memory folder is off unless ``files.enabled`` is set. Transcripts used to be written in clear."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlcipher3", reason="encryption at rest needs the lifecycle extra (sqlcipher3-binary)")

from engram.engine import Engram  # noqa: E402
from engram.files.transcripts import transcript_path  # noqa: E402
from tests.lifecycle import test_encrypted_cli as encrypted_cli  # noqa: E402

KEY = "correct horse battery staple"
CONVERSATION = "cli:sess_1"
QUESTION = "Which vault holds the quarterly payroll archive for the finance team?"
ANSWER = "The payroll archive lives in the basement vault behind door seven, combination 4-8-15."


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _open(home: Path, key: str | None = KEY, **history: Any) -> Engram:
    privacy = {"encryption_key": key} if key else {}
    return Engram.from_settings(home=home, path=home / "memory.db", embeddings={"provider": "none"},
                                privacy=privacy, history={"transcript_auto_index": True, **history})


def _talk(home: Path, **history: Any) -> None:
    mem = _open(home, **history)
    try:
        mem.history.append(CONVERSATION, "user", QUESTION)
        mem.history.append(CONVERSATION, "assistant", ANSWER)
    finally:
        mem.close()  # finishes the background indexing


def test_with_a_key_turns_are_indexed_and_transcripts_written_only_to_a_named_folder(
        isolated_home: Path, tmp_path: Path) -> None:
    home = isolated_home
    _talk(home)
    database = home / "memory.db"
    assert not database.read_bytes()[:16].startswith(b"SQLite format 3")
    # Nothing on disk holds the conversation in clear: no transcripts/default/cli_sess_1.md.
    assert not transcript_path(home / "transcripts", CONVERSATION, agent="default").exists()
    assert _files_holding(home, b"payroll archive") == []
    # The turn is still a memory, in the encrypted store, recalled like any other.
    mem = _open(home)
    try:
        hits = mem.recall("payroll archive vault")
        assert [h.memory.key for h in hits][:1] == ["transcript:cli:sess_1:1"]  # the key as written (no empty thread)
        assert "door seven" in hits[0].memory.content
    finally:
        mem.close()
    # A folder named in history.transcripts_dir is an explicit choice, as files.enabled is: written
    # as before (plain markdown, which the docs say).
    named_home, folder = tmp_path / "named", tmp_path / "my-transcripts"
    _talk(named_home, transcripts_dir=str(folder))
    written = transcript_path(folder, CONVERSATION, agent="default").read_text(encoding="utf-8")
    assert "door seven" in written and "[Indexed: Which vault holds the quarterly payroll" in written
    assert not (named_home / "transcripts").exists()


def test_transcripts_written_before_the_key_was_set_are_pointed_out(
        isolated_home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # Written in clear first (no key yet), then the same folder found beside an encrypted store
    # (SQLCipher cannot encrypt the old file in place, so the key comes with a new home).
    plain_home = tmp_path / "plain"
    _talk(plain_home, key=None)
    old = plain_home / "transcripts"
    assert _files_holding(old, b"payroll archive"), "the transcript should have been written in clear"
    isolated_home.mkdir(parents=True, exist_ok=True)
    old.rename(isolated_home / "transcripts")
    before = {p: p.read_bytes() for p in (isolated_home / "transcripts").rglob("*") if p.is_file()}
    with caplog.at_level(logging.WARNING, logger="engram.files"):
        _open(isolated_home).close()
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "plain-text copies of conversations" in said and str(isolated_home / "transcripts") in said
    assert "history.transcripts_dir" in said
    # Left in place (it may be the user's own copy): not deleted, not written to.
    _talk(isolated_home)
    after = {p: p.read_bytes() for p in (isolated_home / "transcripts").rglob("*") if p.is_file()}
    assert after == before


def engram(home: Path, *args: str) -> subprocess.CompletedProcess:
    return encrypted_cli.engram(home, *args, key=KEY, ENGRAM_HISTORY__TRANSCRIPT_AUTO_INDEX="true",
                                ENGRAM_EMBEDDINGS__PROVIDER="none", ENGRAM_HISTORY__TRANSCRIPTS_DIR="")


ok = encrypted_cli.ok


def test_the_cli_writes_a_transcript_only_when_asked_for_one(isolated_home: Path) -> None:
    home = isolated_home
    ok(engram(home, "history", "append", CONVERSATION, QUESTION))
    ok(engram(home, "history", "append", CONVERSATION, ANSWER, "--role", "assistant"))
    assert _files_holding(home, b"payroll archive") == []  # automatic indexing wrote no transcript
    assert "door seven" in ok(engram(home, "recall", "payroll archive vault"))
    # `engram history transcript KEY` asks for the file by name: it is written, and, asked for, it
    # is not named at each start as a plain copy left from before the key (it used to be, forever).
    ok(engram(home, "history", "transcript", CONVERSATION))
    path = transcript_path(home / "transcripts", CONVERSATION, agent="default")
    assert "door seven" in path.read_text(encoding="utf-8")
    run = engram(home, "history", "list")
    ok(run)
    assert "plain-text copies" not in " ".join(run.stderr.split())
    # Changed since (here: written over by something else), it is no longer the file asked for.
    path.write_text(path.read_text(encoding="utf-8") + "\nedited elsewhere\n", encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    run = engram(home, "history", "list")
    ok(run)
    said = " ".join(run.stderr.split())
    assert "plain-text copies of conversations" in said and str(home / "transcripts") in said


def test_a_transcript_asked_for_does_not_hide_one_written_before_the_key(
        isolated_home: Path, tmp_path: Path) -> None:
    plain_home = tmp_path / "plain"
    _talk(plain_home, key=None)  # an automatic transcript, in clear, before any key
    isolated_home.mkdir(parents=True, exist_ok=True)
    (plain_home / "transcripts").rename(isolated_home / "transcripts")
    home = isolated_home
    ok(engram(home, "history", "append", "cli:other", QUESTION))
    ok(engram(home, "history", "transcript", "cli:other"))
    run = engram(home, "history", "list")
    ok(run)
    said = " ".join(run.stderr.split())
    assert "plain-text copies of conversations" in said and str(home / "transcripts") in said
