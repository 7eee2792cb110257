"""Real servers for interface tests: a SQLite file in tmp_path, uvicorn on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.auth import TokenStore
from engram.engine import Engram
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.interfaces.settings import ServerSettings


@dataclass
class Served:
    url: str
    engram: Engram
    tokens: TokenStore
    alice: str
    bob: str
    db_path: Path

    def client(self, token: str | None = None, **headers: str) -> httpx.Client:
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


@contextmanager
def serving(tmp_path: Path, **engine_settings: Any) -> Iterator[Served]:
    """A server as ``engram serve`` runs one (settings, local embeddings, audit trail, history in
    the same file), with tokens for alice and bob; ``engine_settings`` beside the defaults."""
    db_path = tmp_path / "memory.db"
    engram = Engram.from_settings(home=tmp_path, path=db_path, **engine_settings)
    tokens = TokenStore.open(db_path)
    alice, _ = tokens.create("alice", "test")
    bob, _ = tokens.create("bob", "test")
    app = create_app(engram, tokens, ServerSettings(max_body_bytes=64_000, mcp_tools="both"))
    server = BackgroundServer(app).start()
    try:
        yield Served(server.url, engram, tokens, alice, bob, db_path)
    finally:
        server.stop()
        tokens.close()
        engram.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path) as server:
        yield server
