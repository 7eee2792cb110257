"""Where log lines go. A server command's: engram's own (maintenance, the ``engram.operations``
line each change writes, warnings) one plain line each on stderr, as uvicorn writes its own. Any
other command's: only warnings, as ``warning: ...`` like the CLI's own (docs/cli.md), so a script
finds each one by that prefix (Python's fallback wrote the bare message).

Without this, the MCP SDK installs its own handler on the root logger when its server is built (a
rich console handler at INFO): every library's INFO chatter showed, and each line was folded at
the terminal's width with a time column, so the operations log's JSON came out as ten lines in a
service's log. A program that configured logging itself keeps its configuration.
"""

from __future__ import annotations

import logging
import sys


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


class _CommandPrefix(logging.Formatter):
    """``warning: message``: the CLI's own layout of a warning (``error:`` for worse)."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {super().format(record)}"


def _not_psycopg_chatter(record: logging.LogRecord) -> bool:
    """psycopg's warnings (its pool's ``discarding closed connection: <psycopg.Connection [BAD]>``,
    ``error connecting in 'engram': ...`` when the server goes away) are left out of a command's
    stderr: engram reports the failure itself, as one ``error: PostgreSQL ... is unreachable`` line."""
    return record.levelno >= logging.ERROR or not (record.name == "psycopg" or record.name.startswith("psycopg."))


def show_command_warnings() -> None:
    """Warnings on stderr as ``warning: ...`` while no handler is configured (but psycopg's:
    ``_not_psycopg_chatter``); called by the ``engram`` entry point. It replaces Python's
    last-resort handler rather than adding one to the root, so ``show_server_logs`` (and the MCP
    SDK) still find the root bare and set it up, and a server's log keeps psycopg's warnings."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_CommandPrefix("%(message)s"))
    handler.addFilter(_not_psycopg_chatter)
    logging.lastResort = handler
