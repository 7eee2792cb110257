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


def test_a_schedule_kept_under_the_urls_old_name_is_found_and_renamed_once(pg_url: str, tmp_path) -> None:
    # Earlier versions named the file after the URL as spelled: a store upgraded in place keeps its schedule.
    import hashlib
    import json

    from engram.db.postgres import redact_dsn
    from engram.root import MAINTENANCE_STATE, database_sidecar

    settings = load_settings(home=tmp_path, database_url=pg_url)
    engram = Engram.from_settings(settings)
    try:
        engram.remember("a fact", key="f")
        maintenance = maintenance_for(engram, settings)
        assert maintenance.run().ran
        path = maintenance.state_path
        kept = path.read_text(encoding="utf-8")
        old = path.with_name(f"postgres-{hashlib.sha256(redact_dsn(pg_url).encode()).hexdigest()[:16]}"
                             f"{MAINTENANCE_STATE}")
        assert old != path
        path.rename(old)  # as an earlier version left it
        again = maintenance_for(engram, settings)
        assert again.run().ran == []  # found: nothing due
        assert not old.exists() and json.loads(path.read_text(encoding="utf-8")) == json.loads(kept)
        assert database_sidecar(tmp_path, "postgres", pg_url, MAINTENANCE_STATE) == path
    finally:
        engram.close()
