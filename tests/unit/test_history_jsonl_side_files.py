"""The JSONL history's own side files (its write lock and its summaries) live in engram's home, not
beside the JSONL file, which may be another program's (Clawless keeps neither beside its
~/.clawless/conversation-history.jsonl): real files, real flocks, real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engram.config import Settings, load_settings
from engram.model import Role, make_message
from engram.root import open_history

KEY = "telegram:42"
CLAWLESS_LINE = {"userMessage": "recommend a pasta recipe", "botResponse": "Try carbonara.",
                 "chatId": "42", "platform": "telegram", "timestamp": "2026-02-09T10:00:00.000Z"}


def _clawless_file(tmp_path: Path) -> Path:
    path = tmp_path / ".clawless" / "conversation-history.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(CLAWLESS_LINE) + "\n", encoding="utf-8")
    return path


def _settings(home: Path, history_file: Path) -> Settings:
    return load_settings(home=home, files={"enabled": False}, embeddings={"provider": "none"},
                         history={"backend": "jsonl", "path": str(history_file)})


def test_writes_leave_nothing_beside_the_file_and_keep_lock_and_summaries_in_the_home(tmp_path: Path) -> None:
    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    history = open_history(_settings(home, history_file), "default")
    try:
        history.append(KEY, "user", "and a dessert?")
        history.append(KEY, "assistant", "Tiramisu.")
        history.store.set_summary(KEY, "pasta, then dessert")
        history.store.discard(KEY, 0, 1)  # a rewrite (temporary file and rename), not an append
        assert history.store.get_summary(KEY) == "pasta, then dessert"
    finally:
        history.close()
    assert sorted(p.name for p in history_file.parent.iterdir()) == ["conversation-history.jsonl"]
    [lock] = (home / "state").glob("jsonl-*.lock")
    [summaries] = (home / "state").glob("jsonl-*.summaries.json")
    [index_digest] = {p.name.split(".")[0] for p in (lock, summaries)}  # one digest, that of the file
    assert json.loads(summaries.read_text("utf-8"))["telegram:42:"]["summary"] == "pasta, then dessert"
    assert [(line["userMessage"], line["botResponse"]) for line in map(json.loads, history_file.read_text("utf-8").splitlines())
            ] == [("", "Try carbonara."), ("and a dessert?", "Tiramisu.")]  # the discarded question gone

    # Opened again, from the home: the summary is read back.
    again = open_history(_settings(home, history_file), "default")
    try:
        assert again.store.get_summary(KEY) == "pasta, then dessert"
        assert KEY + ":" in again.store.conversations()
    finally:
        again.close()
    assert index_digest.startswith("jsonl-")


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks to see a process wait")
def test_a_writer_in_another_process_waits_for_the_lock_kept_in_the_home(tmp_path: Path) -> None:
    import fcntl

    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    first = open_history(_settings(home, history_file), "default")
    try:
        first.append(KEY, "user", "first writer")
    finally:
        first.close()
    [lock] = (home / "state").glob("jsonl-*.lock")
    inode = os.stat(lock).st_ino
    script = textwrap.dedent(f"""
        from pathlib import Path
        from engram.config import load_settings
        from engram.root import open_history
        settings = load_settings(home=Path({str(home)!r}), files={{"enabled": False}}, embeddings={{"provider": "none"}},
                                 history={{"backend": "jsonl", "path": {str(history_file)!r}}})
        history = open_history(settings, "default")
        history.append({KEY!r}, "user", "second writer")
        history.close()
    """)
    with open(lock, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # another handle on the lock, as another engram would hold it
        child = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
        try:
            # Wait (as long as it takes) until the kernel lists the child as blocked on this lock file.
            waiting = f" {child.pid} "
            while not any(line.split()[1] == "->" and waiting in line and f":{inode} " in line
                          for line in Path("/proc/locks").read_text().splitlines()):
                assert child.poll() is None, f"the second writer did not wait for the lock: {child.stderr.read()}"
            assert "second writer" not in history_file.read_text("utf-8")
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert "second writer" in history_file.read_text("utf-8")
    assert sorted(p.name for p in history_file.parent.iterdir()) == ["conversation-history.jsonl"]


def test_lock_and_summaries_an_earlier_version_made_beside_the_file_are_still_used(tmp_path: Path) -> None:
    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    # The layout of earlier versions: `<file>.lock` and `<file>.summaries.json` beside the file.
    beside_lock = history_file.with_name(history_file.name + ".lock")
    beside_lock.touch()
    beside_summaries = history_file.with_name(history_file.name + ".summaries.json")
    beside_summaries.write_text(json.dumps({"telegram:42:": {"summary": "kept from before", "agent": "default",
                                                             "conversation": "telegram:42:"}}), encoding="utf-8")
    history = open_history(_settings(home, history_file), "default")
    try:
        assert history.store.get_summary(KEY) == "kept from before"
        history.append(KEY, "user", "still here?")
        history.store.set_summary("telegram:7", "another conversation")
        assert history.store.get_summary(KEY) == "kept from before"
    finally:
        history.close()
    assert json.loads(beside_summaries.read_text("utf-8"))["telegram:7:"]["summary"] == "another conversation"
    # Nothing moved into the home: a still-running earlier version locks the same file as this one.
    assert not list(home.rglob("jsonl-*.lock")) and not list(home.rglob("jsonl-*.summaries.json"))


def test_summaries_beside_the_file_are_read_when_only_the_lock_moves(tmp_path: Path) -> None:
    history_file = _clawless_file(tmp_path)
    home = tmp_path / "engram-home"
    beside_summaries = history_file.with_name(history_file.name + ".summaries.json")
    beside_summaries.write_text(json.dumps({"telegram:42:": {"summary": "kept from before"}}), encoding="utf-8")
    history = open_history(_settings(home, history_file), "default")
    try:
        history.store.append(KEY, make_message(Role.USER, "hello again"))
        assert history.store.get_summary(KEY) == "kept from before"
    finally:
        history.close()
    assert sorted(p.name for p in history_file.parent.iterdir()) == [
        "conversation-history.jsonl", "conversation-history.jsonl.summaries.json"]
    assert len(list((home / "state").glob("jsonl-*.lock"))) == 1
