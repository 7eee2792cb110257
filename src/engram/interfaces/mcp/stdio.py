"""``engram mcp``: the MCP server on stdin/stdout for one agent (what a desktop agent launches).

Nothing heavy happens before the handshake: the store opens on the first tool call and the
embedding model (when configured) loads on the first recall that needs it, so MCP clients
never time out waiting for start-up. Logs go to stderr; stdout carries only the protocol.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from engram.engine import Engram
from engram.interfaces.mcp.server import build_server


def run_stdio(open_engram: Callable[[], Engram], *, tools: Literal["both", "clawcode", "ptrclaw"] = "clawcode") -> None:
    """Serve MCP on stdio until the client closes it; ``open_engram`` is called once, lazily."""
    lock = threading.Lock()
    opened: list[Engram] = []

    def resolve(_request: Any) -> Engram:
        with lock:
            if not opened:
                opened.append(open_engram())
            return opened[0]

    try:
        build_server(resolve, tools=tools).run("stdio")
    finally:
        if opened:
            opened[0].close()
