"""Where a server command's log lines go: engram's own (maintenance, the ``engram.operations``
line each change writes, warnings) one plain line each on stderr, as uvicorn writes its own.

Without this, the MCP SDK installs its own handler on the root logger when its server is built (a
rich console handler at INFO): every library's INFO chatter showed, and each line was folded at
the terminal's width with a time column, so the operations log's JSON came out as ten lines in a
service's log. A program that configured logging itself keeps its configuration.
"""

from __future__ import annotations

import logging


class _LevelPrefix(logging.Formatter):
    """``INFO:     message``: uvicorn's layout, so a server's lines read as one log."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname + ':':<9} {super().format(record)}"


def show_server_logs() -> None:
    """engram's INFO and everyone's warnings on stderr, one line each; called by ``engram serve``
    and ``engram mcp`` before the MCP SDK's server is built (its setup then leaves the root alone)."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler()
    handler.setFormatter(_LevelPrefix("%(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("engram").setLevel(logging.INFO)
