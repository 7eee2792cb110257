"""A read-only engram home is no obstacle when everything lives in PostgreSQL: nothing is written
there (a config folder mounted read-only), so the home check leaves it be."""

from __future__ import annotations

from pathlib import Path

from engram import Engram
from tests.interfaces.test_read_only_home import read_only


def test_postgres_with_a_read_only_home_remembers_and_recalls(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with read_only(home), Engram.from_settings(home=home, backend="postgres", database_url=pg_url,
                                               embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("The server room code is 4711")
        assert [h.memory.content for h in engram.recall("server room")] == ["The server room code is 4711"]
