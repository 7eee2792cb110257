"""``-`` reads standard input wherever the CLI takes text or a document: ``remember -``,
``update --content -``, ``history append KEY -``, ``import -`` and ``history append --messages -``; through the real entry point
in a subprocess, with bytes on stdin, so what arrives is what was sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CONTENT = "first line\r\nsecond line — ünïcode ✓\n\ttabbed\n"


def run(home: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(home)
    env["ENGRAM_EMBEDDINGS__PROVIDER"] = "none"
    return subprocess.run([sys.executable, "-m", "engram", *args], input=stdin, capture_output=True, env=env,
                          timeout=120)


def stored(home: Path, *args: str) -> dict:
    done = run(home, "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_remember_and_update_read_content_from_stdin_byte_for_byte(tmp_path: Path) -> None:
    done = run(tmp_path, "--json", "remember", "-", "--key", "piped", stdin=CONTENT.encode())
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path, "get", "piped")["content"] == CONTENT  # \r\n kept: read as bytes, not text
    changed = "replaced\r\n"
    assert run(tmp_path, "update", "piped", "--content", "-", stdin=changed.encode()).returncode == 0
    assert stored(tmp_path, "get", "piped")["content"] == changed


def test_stdin_that_is_not_utf8_is_refused_naming_the_field_and_stores_nothing(tmp_path: Path) -> None:
    assert run(tmp_path, "remember", "kept", "--key", "kept").returncode == 0
    for args, field in ((("remember", "-"), b"content"), (("update", "kept", "--content", "-"), b"--content"),
                        (("import", "-"), b"path"), (("history", "append", "cli:1", "--messages", "-"), b"--messages"),
                        (("history", "append", "cli:1", "-"), b"content")):
        refused = run(tmp_path, *args, stdin=b"caf\xe9 \xff")
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith(b"error: " + field + b": standard input is not UTF-8"), refused.stderr
    assert [m["content"] for m in stored(tmp_path, "list")] == ["kept"]
    assert stored(tmp_path, "history", "show", "cli:1")["count"] == 0


def test_import_and_history_append_read_documents_from_stdin(tmp_path: Path) -> None:
    assert run(tmp_path, "remember", "-", "--key", "piped", stdin=CONTENT.encode()).returncode == 0
    snapshot = run(tmp_path, "export").stdout
    assert run(tmp_path, "--agent", "bob", "import", "-", stdin=snapshot).returncode == 0
    assert stored(tmp_path, "--agent", "bob", "get", "piped")["content"] == CONTENT
    messages = json.dumps([{"role": "user", "content": CONTENT}, {"role": "assistant", "content": "noted"}])
    assert run(tmp_path, "history", "append", "cli:1", "--messages", "-", stdin=messages.encode()).returncode == 0
    shown = stored(tmp_path, "history", "show", "cli:1", "-n", "0")
    assert [m["content"] for m in shown["messages"]] == [CONTENT, "noted"]


def test_history_append_reads_its_message_from_stdin_as_remember_does(tmp_path: Path) -> None:
    """``history append KEY -`` stored a literal "-" where ``remember -`` reads standard input; a
    message that is "-" itself is piped, as for ``remember`` (docs/cli.md)."""
    done = run(tmp_path, "history", "append", "cli:1", "-", "--role", "assistant", stdin=CONTENT.encode())
    assert done.returncode == 0, done.stderr
    assert run(tmp_path, "history", "append", "cli:1", "-", stdin=b"-").returncode == 0
    assert run(tmp_path, "remember", "-", "--key", "dash", stdin=b"-").returncode == 0
    shown = stored(tmp_path, "history", "show", "cli:1", "-n", "0")
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [("assistant", CONTENT), ("user", "-")]
    assert stored(tmp_path, "get", "dash")["content"] == "-"
    both = run(tmp_path, "history", "append", "cli:1", "-", "--messages", "-", stdin=b"[]")
    assert both.returncode == 2 and b"--messages" in both.stderr, both.stderr  # one stdin, one reader
    assert stored(tmp_path, "history", "count", "cli:1")["count"] == 2
