"""Nothing acknowledged is lost: SIGKILL mid-write, and several processes writing at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore

WRITER = """
import sys
from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore
mem = Engram(SqliteMemoryStore(sys.argv[1]), agent=sys.argv[2])
for i in range(int(sys.argv[3])):
    mem.remember(f"note {sys.argv[2]} {i}", key=f"{sys.argv[2]}-{i}", tags=["load"])
    print(i, flush=True)  # the acknowledgement: printed only after remember() returned
"""


def _writer(db: Path, name: str, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), name, str(count)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    SqliteMemoryStore(db).close()  # migrate first so the child starts writing at once
    child = _writer(db, "w", 100_000)
    acknowledged: list[int] = []
    deadline = time.monotonic() + 60
    assert child.stdout is not None
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        acknowledged.append(int(line))
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert len(acknowledged) >= 300, child.stderr.read() if child.stderr else ""

    store = SqliteMemoryStore(db)
    assert store.db.integrity_check() == "ok"
    mem = Engram(store, agent="w")
    for i in acknowledged:
        assert mem.find(f"w-{i}") is not None, f"acknowledged write {i} lost"
    store.close()


def test_concurrent_processes_never_see_database_locked(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    SqliteMemoryStore(db).close()
    writers = [_writer(db, f"p{n}", 150) for n in range(4)]
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "locked" not in err
    store = SqliteMemoryStore(db)
    for n in range(4):
        assert Engram(store, agent=f"p{n}").count() == 150
    assert store.db.integrity_check() == "ok"
    store.close()


def test_fresh_processes_migrate_once(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", f"from engram.store.sqlite import SqliteMemoryStore; SqliteMemoryStore({str(db)!r})"],
            stderr=subprocess.PIPE, text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    store = SqliteMemoryStore(db)
    with store.db.read() as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == sorted(set(versions))
    store.close()
