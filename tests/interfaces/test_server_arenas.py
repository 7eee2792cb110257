"""A long-running server caps glibc's malloc arenas (engram/allocator.py): memory freed on one of
its threads serves the others instead of staying resident in an arena of its own."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest

from engram.allocator import ARENAS, limit_arenas
from tests.interfaces.test_serve_command import read_page

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="arenas are glibc's")

# ``engram`` run as ``python -m engram`` would run it, with one addition for the test to read the
# allocator from inside: on SIGUSR2 the process writes glibc's ``malloc_info`` (one <heap> an arena).
_BOOTSTRAP = """
import ctypes, os, runpy, signal, sys
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
def dump(*_):
    target = os.environ["ARENAS_OUT"]
    handle = libc.fopen((target + ".tmp").encode(), b"w")
    libc.malloc_info(0, handle)
    libc.fclose(handle)
    os.replace(target + ".tmp", target)
signal.signal(signal.SIGUSR2, dump)
sys.argv = ["engram", *sys.argv[1:]]
runpy.run_module("engram", run_name="__main__", alter_sys=True)
"""


def _arenas(proc: subprocess.Popen, out: Path) -> int:
    proc.send_signal(signal.SIGUSR2)
    deadline = time.monotonic() + 60
    while not out.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the server wrote no malloc_info"
        time.sleep(0.1)
    return len(ET.parse(out).getroot().findall("heap"))


@glibc
def test_serve_keeps_to_two_malloc_arenas_across_its_threads(isolated_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "malloc.xml"
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env.update(ENGRAM_HOME=str(isolated_home), ARENAS_OUT=str(out))
    proc = subprocess.Popen([sys.executable, "-c", _BOOTSTRAP, "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        base, token, _ = read_page(proc)
        # Work on the server's threads: stores (the writer, the model, the memory folder), recalls
        # (request workers, the model), history.
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=120) as api:
            for i in range(12):
                assert api.post("/api/v1/memory", json={"content": f"note {i} about the garden"}).status_code == 201
                assert api.get("/api/v1/memory/search", params={"q": f"garden {i}"}).status_code == 200
                turn = {"role": "user", "content": f"turn {i}"}
                assert api.post("/api/v1/history/test%3Ac1", json=turn).status_code in (200, 201)
        assert 1 <= _arenas(proc, out) <= ARENAS
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_a_users_malloc_arena_max_is_left_to_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_arenas() is False


def test_the_arena_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="count must be at least 1, got 0"):
        limit_arenas(0)
