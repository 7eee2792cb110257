"""``engram mcp`` stops on Ctrl-C while it waits for its client's next line, and reads its stdin
line by line exactly as the SDK's own stdio transport did. The SDK read stdin in a worker thread
that Ctrl-C could not interrupt: started from a terminal (stdin open), the server did not stop
until its input ended."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from engram.interfaces.mcp.stdin import CHUNK, stdin_lines

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "terminal", "version": "1"}}}


def test_ctrl_c_stops_a_server_waiting_for_its_next_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(tmp_path), ENGRAM_HOME=str(tmp_path / "engram"), ENGRAM_EMBEDDINGS__PROVIDER="none")
    # SIGINT as a terminal's child has it: a test run started in the background (`./.ci/run &` from a
    # script) ignores SIGINT, children inherit that, and Python then never raises KeyboardInterrupt.
    process = subprocess.Popen([sys.executable, "-m", "engram", "mcp"], env=env, text=True, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps(INITIALIZE) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.send_signal(signal.SIGINT)  # stdin stays open, as a terminal's does
        assert process.wait(timeout=20) == 130
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


# Each case: the bytes, and where the writer pauses (so the reader gets them in pieces).
CASES = {
    "lines": (b'{"a": 1}\n{"b": 2}\n', []),
    "crlf and a lone cr end lines": (b'{"a": 1}\r\n{"b": 2}\r{"c": 3}\n', [9, 10]),
    "a character split between reads": ('{"w": "caf\u00e9 \u6f22"}\n'.encode(), [11, 16]),
    "undecodable bytes are replaced": (b'{"x": "\xff\xfe"}\n{"y": "\xc3"}\n', [9]),
    "a line longer than a read": (b'{"long": "' + b"x" * (3 * CHUNK) + b'"}\n{"next": 1}\n', [CHUNK + 5]),
    "the last line without a newline": (b'{"a": 1}\n{"end": 2}', [12]),
    "nothing": (b"", []),
}


def _expected(data: bytes) -> list[str]:
    return list(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))


async def _read_all(fd: int) -> list[str]:
    return [line async for line in stdin_lines(fd)]


@pytest.mark.parametrize("case", list(CASES))
def test_a_pipe_is_read_as_the_sdk_read_stdin(case: str) -> None:
    data, pauses = CASES[case]
    read_end, write_end = os.pipe()

    def write() -> None:
        start = 0
        for stop in [*pauses, len(data)]:
            if stop > start:
                os.write(write_end, data[start:stop])
            start = stop
            time.sleep(0.05)
        os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert anyio.run(_read_all, read_end) == _expected(data)
    finally:
        writer.join()
        os.close(read_end)


@pytest.mark.parametrize("case", list(CASES))
def test_a_file_is_read_as_the_sdk_read_stdin(case: str, tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"  # engram mcp < requests.jsonl: a file the event loop cannot watch
    path.write_bytes(CASES[case][0])
    fd = os.open(path, os.O_RDONLY)
    try:
        assert anyio.run(_read_all, fd) == _expected(CASES[case][0])
    finally:
        os.close(fd)
