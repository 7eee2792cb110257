"""A home engram cannot write is refused in words naming the path, at the CLI (exit 1, a storage
failure) and in the library (``StorageError``), before anything is opened: not with SQLite's
"unable to open database file", a failure at the first write, or an internal PermissionError."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Engram
from engram.errors import StorageError


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` made unwritable for this process. Root passes permission bits, so as root the
    file system's immutable flag stands in (it binds root too, as a read-only mount would)."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o500 if path.is_dir() else 0o400)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.fail("running as root needs chattr to make a path read-only")
    subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True,
                          env={**env, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}, timeout=120)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    done = cli(home, "remember", "The server room code is 4711")
    assert done.returncode == 0, done.stderr
    return home


def test_a_read_only_home_is_refused_naming_it(home: Path) -> None:
    with read_only(home):
        for args in (("remember", "another fact"), ("recall", "server room")):
            done = cli(home, *args)
            assert done.returncode == 1
            assert done.stderr.strip() == (f"error: the engram home {home} is not writable: engram keeps its database "
                                           "and history there (check the folder's permissions, or whether its disk is "
                                           "mounted read-only)")
    assert "4711" in cli(home, "recall", "server room").stdout  # nothing lost


def test_a_read_only_database_file_is_refused_naming_it(home: Path) -> None:
    with read_only(home / "memory.db"):
        done = cli(home, "recall", "server room")
        assert done.returncode == 1
        assert f"the database file {home / 'memory.db'} is not writable" in done.stderr
        assert "Traceback" not in done.stderr and "unable to open" not in done.stderr
        with pytest.raises(StorageError, match="memory.db is not writable"):
            Engram.from_settings(home=home, embeddings={"provider": "none"})


def test_a_home_that_cannot_be_created_is_refused_naming_it(tmp_path: Path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    with read_only(parent):
        done = cli(parent / "home", "remember", "a fact")
        assert done.returncode == 1
        assert done.stderr.startswith(f"error: cannot create the engram home {parent / 'home'}: ")
        assert "internal error" not in done.stderr


def test_a_read_only_home_holding_no_database_is_not_refused(tmp_path: Path) -> None:
    # The database elsewhere (`path`) and the memory files off: engram keeps nothing in the home (a
    # config folder mounted read-only), which worked before the home check refused it.
    home = tmp_path / "home"
    home.mkdir()
    settings = {"home": home, "path": tmp_path / "data" / "memory.db", "embeddings": {"provider": "none"},
                "files": {"enabled": False}}
    with read_only(home), Engram.from_settings(**settings) as engram:
        engram.remember("The server room code is 4711")
        assert [h.memory.content for h in engram.recall("server room")] == ["The server room code is 4711"]
    # The memory files kept in the home still need it written: refused in words.
    with read_only(home), pytest.raises(StorageError, match="is not writable"):
        Engram.from_settings(**{**settings, "files": {"enabled": True}})
