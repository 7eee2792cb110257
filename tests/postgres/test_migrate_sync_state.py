"""``engram migrate`` hands the memory folder's sync state to PostgreSQL: the first sync there
sets no memory in conflict that nobody edited by hand, and still finds a hand edit made before."""

from __future__ import annotations

from pathlib import Path

from engram.config import load_settings
from engram.engine import Engram
from engram.files.sync import FileSync
from engram.root import migrate_to_postgres


def _entry_file(folder: Path, text: str) -> Path:
    return next(p for p in folder.rglob("*.md") if text in p.read_text(encoding="utf-8"))


def test_the_first_sync_on_postgres_sets_no_recalled_memory_in_conflict(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    lite = load_settings(home=home, agent="alice")
    engram = Engram.from_settings(lite)
    try:
        for text in ("the garden needs water on mondays", "buy shoes before the trip", "call mom on sundays"):
            engram.remember(text, tags=["notes"])
        assert FileSync.from_settings(engram, lite).sync().conflicts == []
        engram.recall("garden water")  # strengthens the memory in the database; its file is left as written
        engram.recall("shoes trip")
    finally:
        engram.close()
    edited = _entry_file(home / "memory", "call mom")
    edited.write_text(edited.read_text(encoding="utf-8").replace("call mom on sundays", "call mom on saturdays"),
                      encoding="utf-8")

    report = migrate_to_postgres(lite, lite.database_path("alice"), pg_url)
    assert report.verified and report.sync_state == str((home / "memory" / ".engram-sync.json").resolve())
    # Run again (as to resume): the state is already PostgreSQL's and is left as it is.
    again = migrate_to_postgres(lite, lite.database_path("alice"), pg_url)
    assert again.verified and again.sync_state is None
    # The database reached by another spelling of its URL is the one the state was handed to.
    spelled = pg_url.replace("postgresql://", "postgres://") + "?application_name=engram-test"
    on_pg = load_settings(home=home, agent="alice", database_url=spelled)
    engram = Engram.from_settings(on_pg)
    try:
        report = FileSync.from_settings(engram, on_pg).sync()
        assert report.conflicts == []
        assert not list((home / "memory").rglob("*.conflict"))
        contents = sorted(m.content for m in engram.list())
        assert contents == ["buy shoes before the trip", "call mom on saturdays", "the garden needs water on mondays"]
    finally:
        engram.close()


def test_a_migrate_without_a_memory_folder_makes_none(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    lite = load_settings(home=home, files={"enabled": False})
    engram = Engram.from_settings(lite)
    try:
        engram.remember("a fact kept in the database only")
    finally:
        engram.close()
    report = migrate_to_postgres(lite, lite.database_path(lite.agent), pg_url)
    assert report.verified and report.sync_state is None
    assert not (home / "memory").exists()


def test_a_state_of_another_database_is_not_handed_over(pg_url: str, tmp_path: Path) -> None:
    # The folder was last synced with another SQLite file (--from an older copy): its state is not
    # this database's to hand over, and stays as it is.
    home = tmp_path / "home"
    lite = load_settings(home=home)
    engram = Engram.from_settings(lite)
    try:
        engram.remember("a fact", tags=["notes"])
        assert FileSync.from_settings(engram, lite).sync().conflicts == []
    finally:
        engram.close()
    state = home / "memory" / ".engram-sync.json"
    before = state.read_bytes()
    other = load_settings(home=tmp_path / "other", files={"enabled": False})
    Engram.from_settings(other).close()
    report = migrate_to_postgres(lite, other.database_path(other.agent), pg_url)
    assert report.verified and report.sync_state is None
    assert state.read_bytes() == before


def test_an_agents_own_database_hands_its_state_to_the_shared_one(pg_url: str, tmp_path: Path) -> None:
    # per_agent_databases: an agent's file kept a state of its own; PostgreSQL, a database of every
    # agent, keeps the shared one.
    home = tmp_path / "home"
    lite = load_settings(home=home, agent="alice", per_agent_databases=True)
    engram = Engram.from_settings(lite)
    try:
        engram.remember("alice waters the garden", tags=["notes"])
        assert FileSync.from_settings(engram, lite).sync().conflicts == []
        engram.recall("garden")
    finally:
        engram.close()
    assert (home / "memory" / ".engram-sync.alice.json").is_file()
    report = migrate_to_postgres(lite, lite.database_path("alice"), pg_url)
    assert report.verified and report.sync_state == str((home / "memory" / ".engram-sync.json").resolve())
    assert migrate_to_postgres(lite, lite.database_path("alice"), pg_url).sync_state is None  # already handed over
    on_pg = load_settings(home=home, agent="alice", database_url=pg_url)
    engram = Engram.from_settings(on_pg)
    try:
        assert FileSync.from_settings(engram, on_pg).sync().conflicts == []
    finally:
        engram.close()
