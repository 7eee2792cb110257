"""`engram serve`, run as the README's main job: a real process, a real socket, the printed token."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from engram import Engram
from engram.config import load_settings
from tests.lifecycle.conftest import remember_at


def read_page(proc: subprocess.Popen[str]) -> tuple[str, str, str]:
    """What ``engram serve`` printed on stderr up to its page's address: ``(base URL, page token,
    the text printed)``; fails if the process ends first."""
    printed = ""
    assert proc.stderr is not None
    while "web page:" not in printed:
        line = proc.stderr.readline()
        assert line, f"serve exited early: {printed}"
        printed += line
    base, token = re.search(r"web page:\s+(\S+)", printed).group(1).split("/?token=")
    return base, token, printed


def _wait_for(predicate, timeout: float = 60.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


def test_serve_prints_a_working_address_and_runs_maintenance(isolated_home: Path) -> None:
    # A conversation memory three weeks old: hygiene (7 days) must purge it once serve runs upkeep.
    with Engram.from_settings(load_settings()) as mem:
        remember_at(mem, time.time() - 21 * 86400, "an old chat line about the weather", category="conversation")
        mem.remember("User prefers Python for scripting", tags=["preferences"])
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_SERVER__MAINTENANCE_INTERVAL_S": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        base, token, _ = read_page(proc)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as api:
            assert api.get("/healthz").json() == {"status": "ok"}
            assert "engram" in api.get("/").text
            found = api.get("/api/v1/memory/search", params={"q": "what language does the user like for scripts"})
            assert found.json()["hits"][0]["memory"]["content"] == "User prefers Python for scripting"

            def purged() -> bool:
                return api.get("/api/v1/memory", params={"category": "conversation"}).json()["memories"] == []

            _wait_for(purged)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    with httpx.Client(base_url=base, timeout=2) as api:  # the run's token was revoked on exit
        try:
            api.get("/healthz")
            raise AssertionError("server still answering after SIGINT")
        except httpx.TransportError:
            pass


def test_serves_upkeep_is_store_wide_whichever_agent_it_serves(isolated_home: Path) -> None:
    # Maintenance run as an agent keeps to that agent's memories; the server serves every agent, so
    # its background upkeep is the store-wide pass even when started as alice.
    with Engram.from_settings(load_settings(agent="bob", embeddings={"provider": "none"})) as bob:
        old = remember_at(bob, time.time() - 21 * 86400, "bob's old chat line", category="conversation")
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_SERVER__MAINTENANCE_INTERVAL_S": "1",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "-a", "alice", "serve", "--port", "0"], env=env,
                            stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        def purged() -> bool:
            assert proc.poll() is None, "serve exited early"
            with Engram.from_settings(load_settings(embeddings={"provider": "none"})) as engram:
                return engram.store.get_many([old.memory.id]) == []

        _wait_for(purged)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_the_socket_answers_while_the_app_starts_then_the_app_takes_it_over() -> None:
    from engram.interfaces.http.serve import address, bind, make_server
    from engram.interfaces.http.starting import StartingResponder

    sock = bind("127.0.0.1", 0)
    base = address(sock)
    responder = StartingResponder(sock).start()
    try:
        with httpx.Client(base_url=base, timeout=10) as client:
            assert client.get("/healthz").json() == {"status": "starting"}
            waiting = client.get("/api/v1/memory", params={"q": "x"})
            assert waiting.status_code == 503 and waiting.headers["retry-after"] == "1"
    finally:
        responder.stop()
    from fastapi import FastAPI

    app = FastAPI()
    app.get("/healthz")(lambda: {"status": "ok"})
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        _wait_for(lambda: server.started, timeout=30)
        assert httpx.get(f"{base}/healthz", timeout=10).json() == {"status": "ok"}
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def _start_serve(home: Path) -> tuple[subprocess.Popen[str], str]:
    """``engram serve`` as a real process; returns it and the page token it printed."""
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_SERVER__MAINTENANCE_INTERVAL_S": "0",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    _, token, _ = read_page(proc)
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
    return proc, token


def _token_works(home: Path, token: str) -> bool:
    from engram.root import open_tokens

    tokens = open_tokens(load_settings(home=home))
    try:
        return tokens.verify(token) is not None
    finally:
        tokens.close()


def test_sigterm_revokes_the_printed_token(isolated_home: Path) -> None:
    proc, token = _start_serve(isolated_home)
    try:
        assert _token_works(isolated_home, token)
    finally:
        proc.send_signal(signal.SIGTERM)  # how a service manager stops it
        proc.wait(timeout=60)
    assert not _token_works(isolated_home, token)


def test_a_killed_runs_token_is_expired_by_the_next_start(isolated_home: Path) -> None:
    proc, token = _start_serve(isolated_home)
    proc.send_signal(signal.SIGKILL)  # no exit path runs at all
    proc.wait(timeout=60)
    assert _token_works(isolated_home, token)
    again, fresh = _start_serve(isolated_home)
    try:
        assert not _token_works(isolated_home, token) and _token_works(isolated_home, fresh)
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=60)
    assert not _token_works(isolated_home, fresh)


def test_the_servers_log_is_one_plain_line_per_event(isolated_home: Path) -> None:
    # The MCP SDK used to install a rich handler on the root logger: each change's operations line
    # (JSON) came out folded over many lines with a time column, and every library's INFO showed.
    import json

    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_SERVER__MAINTENANCE_INTERVAL_S": "0",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "60"}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "-a", "alice", "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    printed = ""
    try:
        base, token, printed = read_page(proc)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as api:
            stored = api.post("/api/v1/memory", json={"content": "Alice likes green tea, " + "strongly " * 20})
            assert stored.status_code == 201, stored.text
    finally:
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    lines = (printed + rest).splitlines()
    operations = [json.loads(line.removeprefix("INFO:").strip()) for line in lines
                  if line.startswith("INFO:") and line.removeprefix("INFO:").strip().startswith("{")]
    assert [(o["event"], o["scope"], o["memories"][0]["key"]) for o in operations] == [
        ("stored", "agent:alice", stored.json()["key"])], printed + rest
    assert not [line for line in lines if re.match(r"\s*\[\d\d/\d\d/\d\d", line)], printed + rest
    assert "StreamableHTTP session manager" not in printed + rest  # the SDK's INFO chatter stays out


def test_once_started_serve_freezes_the_heap_it_built(isolated_home: Path) -> None:
    # What start-up built lives as long as the server: the garbage collector's full passes skip it
    # (each walked ~85,000 objects, ~36 ms on a busy host, every few hundred stores).
    import gc
    from types import SimpleNamespace

    from engram.interfaces.cli.server import _after_listening
    from engram.interfaces.http.readiness import Readiness

    built_at_start = [object()]  # a list: tracked by the collector until frozen
    gc.unfreeze()
    settings = load_settings(embeddings={"provider": "none"})
    try:
        with Engram.from_settings(settings) as engram:
            assert any(o is built_at_start for o in gc.get_objects())
            readiness = Readiness(["model"])
            _after_listening(SimpleNamespace(started=True), engram, settings, 0, threading.Event(), readiness)
            assert readiness.answer()[1] == {"status": "ready"}
            assert gc.get_freeze_count() > 1000
            assert not any(o is built_at_start for o in gc.get_objects())  # no pass visits it now
    finally:
        gc.unfreeze()  # (this process goes on building servers: tests)


def test_an_address_no_socket_takes_exits_2_naming_the_option_and_listens_nowhere(isolated_home: Path) -> None:
    # --port 99999 reached bind() and came out as "internal error: OverflowError"; --host "" bound
    # every interface (bind's meaning of an empty host) and served the API on the network.
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home)}
    for args, said in (
        (("--port", "99999"), "error: --port: 99999 is out of range (allowed: 0 to 65535; 0 picks a free port)"),
        (("--port", "-1"), "error: --port: -1 is out of range (allowed: 0 to 65535; 0 picks a free port)"),
        (("--host", ""), "error: --host: must not be empty (allowed: an address to listen on: 127.0.0.1"),
        (("--host", "  "), "error: --host: must not be empty (allowed: "),
    ):
        done = subprocess.run([sys.executable, "-m", "engram", "serve", *args], env=env, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == "", (args, done.stderr)
        assert done.stderr.startswith(said) and len(done.stderr.strip().splitlines()) == 1, done.stderr
    # The configured port is checked the same way, named where it was set (exit 4: configuration).
    done = subprocess.run([sys.executable, "-m", "engram", "serve"], env={**env, "ENGRAM_SERVER__PORT": "70000"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 4 and "server.port: 70000 is out of range" in done.stderr, done.stderr
    assert "ENGRAM_SERVER__PORT" in done.stderr
    assert not isolated_home.exists()  # nothing made
