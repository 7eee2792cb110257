"""``engram mcp`` fed by a pipe that ends right after the requests (``printf '...' | engram mcp``):
every request read before stdin ended is answered, once, before the process exits. The SDK took
the end of stdin as the end of the connection and cancelled the calls still running: a
``remember`` stored its memory and its answer never came. A real subprocess, its stdin written
whole and closed at once, its stdout read until it exits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from engram.engine import Engram

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(ident: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def _start(home: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(home), ENGRAM_HOME=str(home / "engram"), ENGRAM_EMBEDDINGS__PROVIDER="none")
    return subprocess.Popen([sys.executable, "-m", "engram", "mcp"], env=env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _piped(home: Path, *messages: dict[str, Any]) -> tuple[dict[Any, list[dict[str, Any]]], str]:
    """The answers (by id) ``engram mcp`` wrote for ``messages`` written at once with stdin then
    closed, read until it exited; and its stderr."""
    process = _start(home)
    out, err = process.communicate("".join(json.dumps(m) + "\n" for m in messages), timeout=120)
    assert process.returncode == 0, err
    answers: dict[Any, list[dict[str, Any]]] = {}
    for line in out.splitlines():
        answer = json.loads(line)
        answers.setdefault(answer.get("id"), []).append(answer)
    return answers, err


def _stored(home: Path) -> list[str]:
    with Engram.from_settings(home=home / "engram", embeddings={"provider": "none"}) as engram:
        return sorted(m.content for m in engram.list())


def test_a_write_piped_in_is_answered_before_the_process_exits(tmp_path: Path) -> None:
    answers, err = _piped(tmp_path, INITIALIZE, INITIALIZED, _call(2, "remember", {"content": "piped in and closed"}))
    assert set(answers) == {1, 2}, (answers, err)
    assert len(answers[2]) == 1, answers[2]
    result = answers[2][0]["result"]
    assert not result.get("isError"), result
    stored = json.loads(result["content"][0]["text"])
    assert stored["action"] == "created"
    assert _stored(tmp_path) == ["piped in and closed"]


def test_every_request_in_flight_at_the_end_is_answered_once_and_written_once(tmp_path: Path) -> None:
    writes = [_call(ident, "remember", {"content": f"fact number {ident}"}) for ident in range(2, 7)]
    # A client may write ids as text; "8" is an id of its own, answered as written.
    listing = {**_call(7, "list", {}), "id": "8"}
    answers, err = _piped(tmp_path, INITIALIZE, INITIALIZED, *writes, listing,
                          {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}})
    assert set(answers) == {1, 2, 3, 4, 5, 6, "8", 9}, (answers, err)
    assert all(len(given) == 1 for given in answers.values()), answers
    for ident in range(2, 7):
        result = answers[ident][0]["result"]
        assert not result.get("isError") and json.loads(result["content"][0]["text"])["action"] == "created", result
    assert {t["name"] for t in answers[9][0]["result"]["tools"]} >= {"remember", "recall"}
    assert _stored(tmp_path) == sorted(f"fact number {ident}" for ident in range(2, 7))


def test_a_request_the_client_cancelled_is_not_waited_for(tmp_path: Path) -> None:
    # JSON-RPC answers no cancelled request: the server must not wait for that answer at the end.
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "no"}}
    answers, err = _piped(tmp_path, INITIALIZE, INITIALIZED, _call(2, "remember", {"content": "asked, then called off"}),
                          cancel, _call(3, "remember", {"content": "kept after the cancel"}))
    assert len(answers[3]) == 1 and not answers[3][0]["result"].get("isError"), (answers, err)
    assert len(answers.get(2, [])) <= 1, answers  # (answered only if it was done before the cancel was read)
    assert "kept after the cancel" in _stored(tmp_path)


def test_a_signal_still_stops_a_server_waiting_for_requests(tmp_path: Path) -> None:
    # SIGTERM is what a client or service manager sends to stop the server; stdin stays open.
    process = _start(tmp_path)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(INITIALIZE) + "\n" + json.dumps(INITIALIZED) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        assert time.monotonic() - started < 10
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# Run last at exit (atexit runs its handlers in reverse): what the interpreter's shutdown is then
# left to walk in its full collections, and what was moved beyond them (gc.freeze).
_EXIT_PROBE = (
    "import atexit, gc, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('heap at exit ' + json.dumps("
    "{'frozen': gc.get_freeze_count(), 'walked': len(gc.get_objects())}) + '\\n'))\n"
    "from engram.interfaces.cli.app import main\n"
    "main()\n"
)


def test_the_shutdown_walks_no_heap_and_every_database_is_closed_first(tmp_path: Path) -> None:
    # The interpreter's shutdown runs full collections (more than one) over every object (~120,000
    # here): they were most of the wait between the last answer and the exit (docs/benchmarks.md).
    # The server freezes its heap at exit instead, once everything it opened is closed: nothing
    # may be left for a collection to close, so no WAL stays beside a database (the embedding
    # cache's was, closed by nobody but a finaliser). The local model, as installed: the remember
    # writes its cache.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(tmp_path), ENGRAM_HOME=str(tmp_path / "engram"))
    messages = [INITIALIZE, INITIALIZED, _call(2, "remember", {"content": "Caroline adopted a rescue greyhound"}),
                _call(3, "recall", {"query": "does she have a pet dog?"})]
    done = subprocess.run([sys.executable, "-c", _EXIT_PROBE, "mcp"], env=env, text=True, capture_output=True,
                          input="".join(json.dumps(m) + "\n" for m in messages), timeout=180)
    assert done.returncode == 0, done.stderr
    answers = {json.loads(line).get("id"): json.loads(line) for line in done.stdout.splitlines()}
    assert set(answers) == {1, 2, 3}, (answers, done.stderr)
    assert not answers[2]["result"].get("isError") and not answers[3]["result"].get("isError"), answers
    probe = json.loads(done.stderr.rsplit("heap at exit ", 1)[1].splitlines()[0])
    assert probe["frozen"] > 10 * probe["walked"], probe
    home = tmp_path / "engram"
    assert (home / "embedding-cache.db").is_file() and (home / "memory.db").is_file()
    assert sorted(p.name for p in home.rglob("*-wal")) == [], sorted(p.name for p in home.rglob("*"))
