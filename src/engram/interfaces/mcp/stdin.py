"""The lines of ``engram mcp``'s stdin, read so that Ctrl-C stops the server while it waits for one.

The SDK reads stdin in a worker thread, a blocking ``readline`` that nothing can interrupt: on
Ctrl-C the server's tasks were cancelled, then everything waited for that thread, which returned
only with the client's next line or the end of its input. A server started from a terminal, whose
stdin stays open, did not stop at all. Here the event loop waits until stdin has bytes (a wait a
cancel ends at once) and then reads what is there, which does not block. stdin that the loop
cannot watch (a regular file, as ``engram mcp < requests.jsonl``, or the null device) never blocks
either, and is read as the SDK reads it. Either way each line is what the SDK's own reading gives:
UTF-8 with an undecodable byte replaced, ``\\r`` and ``\\r\\n`` ending a line as ``\\n`` does.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys
from collections.abc import AsyncIterator

import anyio

CHUNK = 1 << 16


class _Unowned(io.TextIOWrapper):
    """A text layer whose close leaves the buffer (stdin's own) open, as the SDK's does."""

    def close(self) -> None:
        with contextlib.suppress(ValueError):
            self.detach()


async def stdin_lines(fd: int = 0) -> AsyncIterator[str]:
    """Each line of ``fd`` (the process's stdin; another descriptor in tests) as the SDK's stdio
    transport reads stdin."""
    try:
        await anyio.wait_readable(fd)
    except (OSError, ValueError, NotImplementedError):  # not a pipe, terminal or socket: reads never wait
        buffer = sys.stdin.buffer if fd == 0 else open(fd, "rb", closefd=False)  # noqa: SIM115 (left open: not ours)
        async for line in anyio.wrap_file(_Unowned(buffer, encoding="utf-8", errors="replace")):
            yield line
        return
    # TextIOWrapper's own decoding (newline=None): UTF-8, "replace", universal newlines.
    decoder = io.IncrementalNewlineDecoder(codecs.getincrementaldecoder("utf-8")("replace"), translate=True)
    started: list[str] = []  # the line read so far (a long line comes in many chunks)
    while True:
        try:
            chunk = os.read(fd, CHUNK)  # readable: returns what is there (b"" at the end)
        except BlockingIOError:  # (stdin left non-blocking by another process, which read it first)
            chunk = None
        if chunk == b"":
            break
        if chunk:
            *ended, rest = decoder.decode(chunk).split("\n")
            for line in ended:
                yield "".join(started) + line + "\n"
                started = []
            started.append(rest)
        await anyio.wait_readable(fd)
    last = "".join(started) + decoder.decode(b"", final=True)
    if last:
        yield last
