"""Backups while another process writes, keep N, restore, start-up integrity check on a corrupted
copy, automatic backups before risky work, VACUUM, and encryption at rest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from engram.backends.sqlite import SqliteBackend, backups_for
from engram.config import load_settings
from engram.db.sqlite import connect
from engram.engine import Engram
from engram.errors import ConfigError, EncryptionKeyError, IntegrityError, MissingDependencyError, StorageError
from engram.lifecycle import clean_close
from engram.lifecycle.backup import Backups, check_file, vacuum
from engram.store.sqlite import SqliteMemoryStore

WRITER = textwrap.dedent("""
    import sys
    import time
    from pathlib import Path
    from engram.engine import Engram
    from engram.store.sqlite import SqliteMemoryStore

    path, stop = sys.argv[1], Path(sys.argv[2])
    engram = Engram(SqliteMemoryStore(path))
    deadline = time.monotonic() + 60  # bounded even if the test never says stop
    for i in range(1_000_000):
        if stop.exists() or time.monotonic() > deadline:
            break
        engram.remember(f"entry number {i} " + "x" * 200, key=f"k{i}")
        print(f"k{i}", flush=True)  # acknowledged: the write has committed
    engram.close()
""")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_backup_while_another_process_writes(tmp_path):
    db = tmp_path / "memory.db"
    SqliteMemoryStore(db).close()
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(stop)], stdout=subprocess.PIPE, text=True)
    acked: list[str] = []
    reader = threading.Thread(target=lambda: acked.extend(line.strip() for line in writer.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while len(acked) < 50 and time.monotonic() < deadline and writer.poll() is None:
            time.sleep(0.01)
        assert len(acked) >= 50, "the writer process did not start writing"
        before = set(acked)  # every write acknowledged before the backup began
        backups = Backups(db, tmp_path / "backups", keep=3)
        info = backups.create("manual")
        still_writing = writer.poll() is None
    finally:
        stop.touch()
        writer.wait(timeout=60)
        reader.join(timeout=10)
    assert writer.returncode == 0
    assert still_writing  # the backup really ran while the other process wrote
    assert check_file(info.path, full=True) == "ok"
    restored = tmp_path / "restored" / "memory.db"
    restored.parent.mkdir()
    Backups(restored, tmp_path / "backups").restore(info.path)
    assert check_file(restored, full=True) == "ok"
    store = SqliteMemoryStore(restored)
    keys = {m.key for m in store.iter_all()}
    store.close()
    assert before <= keys


def test_keep_n_and_last_good(tmp_path):
    db = tmp_path / "memory.db"
    Engram(SqliteMemoryStore(db)).close()
    backups = Backups(db, tmp_path / "b", keep=2)
    made = [backups.create(f"r{i}") for i in range(4)]
    assert [b.path for b in backups.list()] == [made[3].path, made[2].path]
    assert backups.last_good().path == made[3].path


def test_restore_brings_back_the_backup_and_backs_up_the_current(tmp_path):
    db = tmp_path / "memory.db"
    engram = Engram(SqliteMemoryStore(db))
    engram.remember("before the backup", key="a")
    backups = Backups(db, tmp_path / "b")
    taken = backups.create()
    engram.remember("after the backup", key="b")
    engram.close()
    backups.restore(taken.path)
    store = SqliteMemoryStore(db)
    assert {m.key for m in store.iter_all()} == {"a"}
    store.close()
    assert any(b.reason == "pre-restore" for b in backups.list())


def test_restoring_the_oldest_backup_when_rotation_is_full_restores_it(tmp_path):
    # keep=2 and two backups: the pre-restore backup once pruned the oldest, the one chosen,
    # before it was read, and an empty database was restored in its place, reported as done.
    db = tmp_path / "memory.db"
    engram = Engram(SqliteMemoryStore(db))
    engram.remember("the first fact", key="a")
    backups = Backups(db, tmp_path / "b", keep=2)
    oldest = backups.create()
    engram.remember("the second fact", key="b")
    backups.create()
    engram.remember("the third fact", key="c")
    engram.close()
    assert backups.restore(oldest.path).path == oldest.path
    store = SqliteMemoryStore(db)
    assert {m.key for m in store.iter_all()} == {"a"}
    store.close()
    kept = backups.list()
    assert len(kept) == 2 and kept[0].reason == "pre-restore"
    store = SqliteMemoryStore(kept[0].path)  # what the restore replaced is in the pre-restore backup
    assert {m.key for m in store.iter_all()} == {"a", "b", "c"}
    store.close()


def test_a_restore_source_that_is_gone_is_an_error_not_a_new_empty_database(tmp_path):
    # restore reads its backup read-only: a file gone by then is never created empty and copied in.
    with pytest.raises(StorageError):
        connect(str(tmp_path / "gone.db"), readonly=True)
    assert not (tmp_path / "gone.db").exists()


FULL_DISK = textwrap.dedent("""
    import resource
    import sys
    from pathlib import Path
    from engram.db.sqlite import Database
    from engram.errors import StorageError
    from engram.lifecycle.backup import Backups

    live = Database(sys.argv[1])  # the store's own connection, as engram backup and maintain use it
    # Files may not grow past 64 KiB: the backup copy runs out of room as on a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    try:
        Backups(Path(sys.argv[1]), Path(sys.argv[2])).create("manual", source=live)
    except StorageError as exc:
        print(exc)
    else:
        print("no error")
""")


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_backup_that_runs_out_of_room_leaves_no_partial_file_and_says_so(tmp_path):
    db = tmp_path / "memory.db"
    engram = Engram(SqliteMemoryStore(db))
    engram.remember_many([{"content": f"note {i} " + os.urandom(300).hex()} for i in range(300)])
    engram.close()
    assert db.stat().st_size > 4 * 65536
    before = sha(db)
    run = subprocess.run([sys.executable, "-c", FULL_DISK, str(db), str(tmp_path / "backups")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert list((tmp_path / "backups").iterdir()) == []  # no .partial left holding the space
    assert run.stdout.startswith(f"backup of {db} into {tmp_path / 'backups'} failed"), run.stdout
    assert sha(db) == before and check_file(db) == "ok"


def corrupt(path: Path, offset: int, length: int) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(os.urandom(length))


@pytest.mark.parametrize("where", ["pages", "header"])
def test_corrupted_copy_is_detected_at_startup_and_nothing_is_overwritten(tmp_path, where):
    home = tmp_path / "home"
    settings = load_settings(home=home)
    engram = Engram.from_settings(settings)
    for i in range(300):
        engram.remember(f"memory number {i} " + "y" * 300, key=f"m{i}")
    engram.close()
    backups = backups_for(settings, settings.database_path())
    good = backups.create("manual")
    db = settings.database_path()
    SqliteMemoryStore(db).close()  # checkpoint: everything in the main file
    if where == "pages":
        corrupt(db, 4096 * 5, 4096 * 6)
    else:
        corrupt(db, 0, 100)
    fingerprint = sha(db)
    with pytest.raises(IntegrityError) as err:
        Engram.from_settings(settings)
    message = str(err.value)
    assert str(db) in message and str(good.path) in message and "engram restore" in message
    assert sha(db) == fingerprint
    assert not Path(str(db) + "-wal").exists() or Path(str(db) + "-wal").stat().st_size == 0
    # restore moves the damaged file aside (never overwritten) and brings the backup back
    backups.restore()
    aside = [p for p in db.parent.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1 and sha(aside[0]) == fingerprint
    engram = Engram.from_settings(settings)
    assert engram.count() == 300
    engram.close()


def test_a_clean_close_spares_the_next_start_its_check_until_anything_changes(tmp_path):
    settings = load_settings(home=tmp_path / "home")
    engram = Engram.from_settings(settings)
    for i in range(300):
        engram.remember(f"memory number {i} " + "y" * 300, key=f"m{i}")
    engram.close()
    db = settings.database_path()
    assert clean_close.verified_at(db) is not None  # the process checked at start and closed cleanly
    # Damage that keeps size and modification time is invisible to the stamp: the quick start
    # trusts it (that is the saving), the full check still reads the pages.
    before = db.stat()
    corrupt(db, 4096 * 5, 4096 * 6)
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    backups = backups_for(settings, db)
    backups.startup_check("quick")
    with pytest.raises(IntegrityError):
        backups.startup_check("full")
    # Any change to the file since the clean close (another writer, a crash, a copy) brings the check back.
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    with pytest.raises(IntegrityError):
        Engram.from_settings(settings)
    # So does a stamp older than a day, even on an untouched file.
    os.utime(db, ns=(before.st_atime_ns, before.st_mtime_ns))
    backups.startup_check("quick")
    stamp = json.loads(clean_close.stamp_path(db).read_text())
    clean_close.stamp_path(db).write_text(json.dumps({**stamp, "checked_at": time.time() - 2 * 86400}))
    with pytest.raises(IntegrityError):
        backups.startup_check("quick")


def test_no_stamp_while_another_connection_holds_changes(tmp_path):
    settings = load_settings(home=tmp_path / "home")
    engram = Engram.from_settings(settings)
    other = SqliteMemoryStore(settings.database_path())  # e.g. a server still running
    engram.remember("written while another process has the file open")
    engram.close()
    assert clean_close.verified_at(settings.database_path()) is None
    other.close()


def test_startup_error_without_backups_says_so(tmp_path):
    db = tmp_path / "memory.db"
    db.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(IntegrityError, match="no backup was found"):
        Backups(db, tmp_path / "b").startup_check()


def test_automatic_backups_before_migrations_bulk_forgets_and_imports(tmp_path):
    settings = load_settings(home=tmp_path)
    engram = Engram.from_settings(settings)
    engram.remember("tagged one", key="t1", tags="old")
    engram.remember("tagged two", key="t2", tags="old")
    snapshot = engram.export_snapshot()
    backups = backups_for(settings, settings.database_path())
    engram.forget("t1")
    assert backups.list() == []  # forgetting one memory by key is not bulk
    engram.forget(tag="old")
    assert [b.reason for b in backups.list()] == ["bulk-forget"]
    engram.import_snapshot(snapshot)
    assert [b.reason for b in backups.list()] == ["import", "bulk-forget"]
    with engram.store.db.write() as conn:  # pretend the audit migration has not run yet
        conn.execute("DROP TABLE audit_log")
        conn.execute("DELETE FROM schema_migrations WHERE version = 4")
    engram.close()
    store = SqliteBackend.open(settings, "default").memory
    assert backups.list()[0].reason == "pre-migration"
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM audit_log").fetchone()[0] == 0
    store.close()


def test_vacuum_shrinks_after_deletes(tmp_path):
    store = SqliteMemoryStore(tmp_path / "memory.db")
    engram = Engram(store)
    for i in range(200):
        engram.remember(f"bulky {i} " + "z" * 2000, key=f"b{i}")
    store.delete([m.id for m in store.iter_all()])
    before, after = vacuum(store.db)
    assert after < before
    assert store.db.integrity_check() == "ok"
    engram.close()


def test_encryption_at_rest(tmp_path):
    pytest.importorskip("sqlcipher3")
    settings = load_settings(home=tmp_path, privacy={"encryption_key": "correct horse battery"})
    engram = Engram.from_settings(settings)
    engram.remember("the launch code is tangerine", key="secret")
    backups = backups_for(settings, settings.database_path())
    taken = backups.create("manual", source=engram.store.db)
    engram.close()
    db = settings.database_path()
    for path in (db, taken.path):
        assert b"tangerine" not in path.read_bytes() and not path.read_bytes().startswith(b"SQLite format 3")
    with pytest.raises(IntegrityError, match="encrypted"):
        SqliteMemoryStore(db)
    with pytest.raises(IntegrityError, match="key is wrong"):
        SqliteMemoryStore(db, key="wrong")
    wrong = load_settings(home=tmp_path, privacy={"encryption_key": "not the key"})
    with pytest.raises(IntegrityError, match="encryption key is wrong"):
        Engram.from_settings(wrong)
    # The user's configuration (exit 4 at the CLI), still an IntegrityError to code handling one.
    with pytest.raises(EncryptionKeyError) as refused:
        Engram.from_settings(wrong)
    assert isinstance(refused.value, ConfigError) and str(db) in str(refused.value)
    reopened = Engram.from_settings(settings)
    assert reopened.recall("launch code").hits[0].memory.key == "secret"
    reopened.close()
    assert check_file(taken.path, key="correct horse battery", full=True) == "ok"


def test_encryption_without_the_package_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_cipher(name, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if name.startswith("sqlcipher3"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cipher)
    with pytest.raises(MissingDependencyError) as err:
        SqliteMemoryStore(tmp_path / "x.db", key="k")
    assert err.value.extra == "lifecycle" and "sqlcipher3-binary" in str(err.value)


def test_a_key_with_a_backend_that_cannot_encrypt_is_refused(tmp_path):
    from engram.errors import ConfigError

    settings = load_settings(home=tmp_path, backend="jsonfile", privacy={"encryption_key": "k"})
    with pytest.raises(ConfigError, match="cannot encrypt"):
        Engram.from_settings(settings)


def test_a_wrong_key_is_named_as_such_and_restore_does_not_call_the_backup_damaged(tmp_path):
    import os
    import subprocess
    import sys

    from engram.errors import ConfigError

    pytest.importorskip("sqlcipher3")
    settings = load_settings(home=tmp_path, privacy={"encryption_key": "correct horse battery"})
    with Engram.from_settings(settings) as engram:
        engram.remember("the launch code is tangerine", key="secret")
        backups_for(settings, settings.database_path()).create("manual", source=engram.store.db)
    wrong = load_settings(home=tmp_path, privacy={"encryption_key": "not the key"},
                          lifecycle={"backup": {"startup_check": "full"}})
    with pytest.raises(ConfigError) as raised:
        Engram.from_settings(wrong)
    assert "encryption_key" in str(raised.value) and "engram restore" not in str(raised.value)

    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_PRIVACY__ENCRYPTION_KEY="not the key")
    restore = subprocess.run([sys.executable, "-m", "engram", "restore", "--yes"], capture_output=True, text=True,
                             env=env, timeout=120)
    assert restore.returncode == 4, restore.stderr
    assert "encryption key" in restore.stderr and "damaged" not in restore.stderr
    env["ENGRAM_PRIVACY__ENCRYPTION_KEY"] = "correct horse battery"
    fine = subprocess.run([sys.executable, "-m", "engram", "get", "secret"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert fine.returncode == 0 and "tangerine" in fine.stdout  # nothing was changed
