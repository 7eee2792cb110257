"""``engram mcp``: the MCP server on stdin/stdout for one agent (what a desktop agent launches).

Nothing heavy happens before the handshake: the protocol is served at once, while a background
thread opens the store and loads the embedding model (when configured), so the first tool call
finds them ready or waits only for what is left; MCP clients never time out waiting for
start-up. A failure there is left for the first tool call to report. Logs go to stderr; stdout
carries only the protocol.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Literal

from engram.engine import Engram
from engram.interfaces.mcp.server import build_server

log = logging.getLogger("engram.mcp")


def run_stdio(open_engram: Callable[[], Engram], *, tools: Literal["both", "clawcode", "ptrclaw"] = "clawcode") -> None:
    """Serve MCP on stdio until the client closes it; ``open_engram`` is called once, lazily."""
    lock = threading.Lock()
    opened: list[Engram] = []

    def resolve(_request: Any) -> Engram:
        with lock:
            if not opened:
                opened.append(open_engram())
            return opened[0]

    def warm() -> None:
        try:
            warm_up = getattr(resolve(None).embedder, "warm_up", None)
            if warm_up is not None:
                warm_up()
        except Exception:  # the first tool call opens again and reports the error to the client
            log.debug("opening engram in the background failed", exc_info=True)

    server = build_server(resolve, tools=tools)
    threading.Thread(target=warm, name="engram-open", daemon=True).start()
    try:
        server.run("stdio")
    finally:
        if opened:
            opened[0].close()
