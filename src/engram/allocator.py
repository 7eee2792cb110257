"""The C allocator of a long-running engram process (``engram serve``, ``engram mcp``).

glibc's malloc gives each thread that allocates while another holds an arena an arena of its own,
up to eight per core, and an arena keeps the memory freed in it for its own later use: it goes
back to the system only from the arena's top. A server's threads (the request workers, the model
loading and embedding, the writer, the memory-folder sync) each come to hold one, so memory freed
on one thread (a query's numpy arrays, the vector matrix copied as it grows, onnxruntime's model
load) cannot serve the next request on another and stays resident. Measured with
``bench/soak.py``'s mix (docs/benchmarks.md): six arenas, 65 MB free in them after start-up and
~1.5 MB more per 1,000 requests that no Python tracer sees; with two arenas, ~25 MB free after
start-up and no growth of it (what grows then is the data: the vectors, SQLite's page caches
filling, the memory folder's parsed files). Two arenas are enough: the GIL already serialises
most of what these threads allocate, so they seldom wait for each other's arena.

A user's ``MALLOC_ARENA_MAX`` is glibc's own setting, read when the process starts: it wins, and
nothing is changed here. Other C libraries (musl, macOS) have no such arenas: nothing to do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

_M_ARENA_MAX = -8  # mallopt parameter number, from glibc's <malloc.h>
ARENAS = 2


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - present only in glibc
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(count: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``count`` for this process; returns whether the cap was set.

    Call it before the process starts its threads: glibc fixes its limit once eight arenas exist.
    Not set when ``MALLOC_ARENA_MAX`` is (the user's choice), or off glibc."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, count))
