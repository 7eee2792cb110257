"""``/readyz`` over real sockets: 503 naming what start-up work is pending, 200 once done (``degraded``
naming a step that failed: the server still serves) - while ``/healthz`` (liveness) answers 200 throughout, without a token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from engram import Engram
from engram.auth import TokenStore
from engram.config import load_settings
from engram.errors import StorageError
from engram.interfaces.http.app import create_app
from engram.interfaces.http.readiness import Readiness
from engram.interfaces.http.serve import BackgroundServer, address, bind
from engram.interfaces.http.starting import StartingResponder
from tests.interfaces.test_serve_command import _wait_for
from tests.lifecycle.conftest import remember_at


def test_readyz_names_pending_steps_then_a_failed_one_while_healthz_stays_ok(tmp_path: Path) -> None:
    engram = Engram.from_settings(home=tmp_path, path=tmp_path / "memory.db", embeddings={"provider": "none"})
    tokens = TokenStore.open(tmp_path / "memory.db")
    readiness = Readiness(["model", "maintenance"])
    server = BackgroundServer(create_app(engram, tokens, readiness=readiness, mcp=False)).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            waiting = client.get("/readyz")
            assert waiting.status_code == 503 and waiting.headers["retry-after"] == "1"
            assert waiting.json()["status"] == "starting" and waiting.json()["pending"] == ["model", "maintenance"]
            assert "embedding model" in waiting.json()["detail"]
            assert client.get("/healthz").json() == {"status": "ok"}  # alive while not ready
            readiness.done("model")
            assert client.get("/readyz").json()["pending"] == ["maintenance"]
            readiness.failed("maintenance", StorageError("cannot write the backup folder /x"))
            failed = client.get("/readyz")
            assert failed.status_code == 200 and "retry-after" not in failed.headers
            assert failed.json()["status"] == "degraded"
            assert failed.json()["failed"] == {"maintenance": "StorageError: cannot write the backup folder /x"}
            assert "maintenance" in failed.json()["detail"] and "backup folder" in failed.json()["detail"]
            assert client.get("/healthz").json() == {"status": "ok"}
            # /openapi.json describes the answers it gave, 200 and 503 (a client generated from it
            # saw an empty schema): every field the probe read is there, each status named.
            spec = client.get("/openapi.json").json()
            responses = spec["paths"]["/readyz"]["get"]["responses"]
            refs = {code: responses[code]["content"]["application/json"]["schema"]["$ref"] for code in ("200", "503")}
            assert refs["200"] == refs["503"]
            schema = spec["components"]["schemas"][refs["200"].rsplit("/", 1)[1]]
            assert set(schema["properties"]["status"]["enum"]) == {"starting", "ready", "degraded"}
            assert {*waiting.json(), *failed.json()} <= set(schema["properties"]) == {"status", "pending", "failed", "detail"}
    finally:
        server.stop()
    # An app given no start-up steps (an embedded server, the tests' own) is ready as it serves.
    plain = BackgroundServer(create_app(engram, tokens, mcp=False)).start()
    try:
        ready = httpx.get(f"{plain.url}/readyz", timeout=30)
        assert ready.status_code == 200 and ready.json() == {"status": "ready"}
    finally:
        plain.stop()
        tokens.close()
        engram.close()


def test_the_starting_responder_answers_readyz_with_what_is_pending() -> None:
    sock = bind("127.0.0.1", 0)
    responder = StartingResponder(sock, Readiness(["store", "model"])).start()
    try:
        with httpx.Client(base_url=address(sock), timeout=10) as client:
            assert client.get("/healthz").json() == {"status": "starting"}
            waiting = client.get("/readyz")
            assert waiting.status_code == 503 and waiting.headers["retry-after"] == "1"
            assert waiting.json()["pending"] == ["store", "model"] and "integrity check" in waiting.json()["detail"]
    finally:
        responder.stop()
        sock.close()


def _serve(home: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    environ = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", **env}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "serve", "--port", "0"], env=environ,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "engram is starting on URL/ (...)": printed once it listens
    assert "engram is starting on" in first, first
    return proc, first.split("starting on ", 1)[1].split("/ ", 1)[0]


def _ready_answers(base: str, proc: subprocess.Popen[str]) -> list[httpx.Response]:
    """Every ``/readyz`` answer until one is not "starting" (the first is read at once)."""
    seen: list[httpx.Response] = []

    def settled() -> bool:
        assert proc.poll() is None, "serve exited early"
        try:
            seen.append(httpx.get(f"{base}/readyz", timeout=30))
        except httpx.TransportError:
            return False
        return seen[-1].json().get("status") != "starting"

    _wait_for(settled, timeout=120)
    return seen


def test_engram_serve_is_ready_only_after_its_first_maintenance_pass(isolated_home: Path) -> None:
    # A conversation memory three weeks old: the first pass's hygiene purges it, so ready means it is gone.
    with Engram.from_settings(load_settings(embeddings={"provider": "none"})) as mem:
        old = remember_at(mem, time.time() - 21 * 86400, "an old chat line about the weather", category="conversation")
    proc, base = _serve(isolated_home, ENGRAM_SERVER__MAINTENANCE_INTERVAL_S="3600")
    try:
        answers = _ready_answers(base, proc)
        for waiting in answers[:-1]:
            assert waiting.status_code == 503 and set(waiting.json()["pending"]) <= {"store", "model", "maintenance"}
        assert answers[-1].status_code == 200 and answers[-1].json() == {"status": "ready"}
        assert httpx.get(f"{base}/healthz", timeout=30).json() == {"status": "ok"}
        with Engram.from_settings(load_settings(embeddings={"provider": "none"})) as engram:
            assert engram.store.get_many([old.memory.id]) == []
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_engram_serve_names_a_failed_first_maintenance_pass(isolated_home: Path) -> None:
    with Engram.from_settings(load_settings(embeddings={"provider": "none"})) as mem:
        mem.remember("User prefers Python for scripting")
    blocked = isolated_home / "not-a-folder"
    blocked.write_text("a file where the backup folder should be")
    proc, base = _serve(isolated_home, ENGRAM_SERVER__MAINTENANCE_INTERVAL_S="3600",
                        ENGRAM_LIFECYCLE__BACKUP__FOLDER=str(blocked / "backups"))
    try:
        failed = _ready_answers(base, proc)[-1]
        assert failed.status_code == 200 and failed.json()["status"] == "degraded", failed.text
        assert list(failed.json()["failed"]) == ["maintenance"] and "not-a-folder" in failed.json()["detail"]
        assert httpx.get(f"{base}/healthz", timeout=30).json() == {"status": "ok"}  # alive: it still serves
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_model_step_is_degraded_when_memories_stay_without_a_vector(tmp_path: Path) -> None:
    # A provider that cannot embed makes embed_missing give up quietly (it logs why): the step must
    # not then say the model is ready while memories are found by full text only.
    from collections.abc import Sequence

    import numpy as np

    from engram.errors import EmbeddingError
    from engram.interfaces.seams import warm_up_in_background
    from engram.store.sqlite import SqliteMemoryStore
    from engram.testing.fakes import HashingEmbedder

    class ProviderDown(HashingEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            raise EmbeddingError("the provider is down")

    with Engram(SqliteMemoryStore(tmp_path / "memory.db")) as text_only:
        text_only.remember("stored while no embedder was configured")
    outcomes: list[BaseException | None] = []
    for embedder, expected in ((ProviderDown(), EmbeddingError), (HashingEmbedder(), None)):
        with Engram(SqliteMemoryStore(tmp_path / "memory.db"), embedder=embedder) as mem:
            warm_up_in_background(mem, on_done=outcomes.append).join(timeout=60)
        assert len(outcomes) == 1
        outcome = outcomes.pop()
        if expected is None:
            assert outcome is None  # embedded now: nothing left without a vector
        else:
            assert isinstance(outcome, expected) and "without a vector" in str(outcome)
    readiness = Readiness(["model"])
    readiness.failed("model", EmbeddingError("memories are left without a vector"))
    status, body, _ = readiness.answer()
    assert status == 200 and body["status"] == "degraded" and "model" in body["failed"]
