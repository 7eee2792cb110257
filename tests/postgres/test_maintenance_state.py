"""On PostgreSQL the maintenance schedule and latency samples live in the engram home, named after
the database (no file sits beside it): ``engram maintain`` skips the jobs not due."""

from __future__ import annotations

from engram.config import load_settings
from engram.engine import Engram
from engram.root import maintenance_for


def test_maintenance_state_persists_for_a_database(pg_url: str, tmp_path) -> None:
    settings = load_settings(home=tmp_path, database_url=pg_url)
    engram = Engram.from_settings(settings)
    engram.remember("a fact", key="f")
    assert maintenance_for(engram, settings).run().ran
    engram.close()
    again = Engram.from_settings(settings)
    try:
        assert maintenance_for(again, settings).run().ran == []  # last runs were read back
    finally:
        again.close()
    assert [p.name for p in (tmp_path / "state").iterdir() if p.name.endswith(".maintenance.json")]
