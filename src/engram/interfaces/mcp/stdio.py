"""``engram mcp``: the MCP server on stdin/stdout for one agent (what a desktop agent launches).

Nothing heavy happens before the handshake, and nothing waits for anything else: from launch a
background thread (:class:`BackgroundOpen`) reads the settings, opens the store and loads the
embedding model (when configured) while the main thread imports the MCP SDK and serves the
protocol, so the first tool call finds them ready or waits only for what is left; MCP clients
never time out waiting for start-up. A failure in the background is left for the first tool call
to report (it opens again and raises). Logs go to stderr; stdout carries only the protocol.

This module imports the SDK only inside :func:`run_stdio`, so the caller can start opening first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.engine import Engram

log = logging.getLogger("engram.mcp")


class BackgroundOpen:
    """Settings, then the engine (its model loading meanwhile), opened in a thread from ``start()``."""

    def __init__(self, settings: Callable[[], Settings], open_engram: Callable[[], Engram]) -> None:
        self._settings = settings
        self._open_engram = open_engram
        self._lock = threading.Lock()
        self._engram: Engram | None = None
        self._thread = threading.Thread(target=self._open, name="engram-open", daemon=True)
        self._settings_read = threading.Event()

    def start(self) -> BackgroundOpen:
        self._thread.start()
        return self

    def _open(self) -> None:
        try:
            self._settings()
        except Exception:  # settings() raises it again on the caller's thread
            return
        finally:
            self._settings_read.set()
        try:
            self.engram()
        except Exception:  # the first tool call opens again and reports the error to the client
            log.debug("opening engram in the background failed", exc_info=True)

    def settings(self) -> Settings:
        """The settings, once the thread has read them (raises what reading them raised)."""
        self._settings_read.wait()
        return self._settings()

    def engram(self, _request: Any = None) -> Engram:
        """The engine, opened once (the resolver the MCP server's tools call)."""
        with self._lock:
            if self._engram is None:
                self._engram = self._open_engram()
            return self._engram

    def close(self) -> None:
        """Wait for the background work, then close the engine (the model never left half loaded)."""
        self._thread.join()
        with self._lock:
            engram, self._engram = self._engram, None
        if engram is not None:
            wait = getattr(engram.embedder, "wait_warm_up", None)
            if wait is not None:
                wait()
            engram.close()


def run_stdio(opening: BackgroundOpen) -> None:
    """Serve MCP on stdio until the client closes it (tools: ``server.mcp_tools``), then close
    what ``opening`` opened."""
    try:
        from engram.interfaces.mcp.server import build_server  # the SDK: imported while opening runs

        build_server(opening.engram, tools=opening.settings().server.mcp_tools).run("stdio")
    finally:
        opening.close()
