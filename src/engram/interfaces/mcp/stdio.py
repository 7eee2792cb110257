"""``engram mcp``: the MCP server on stdin/stdout for one agent (what a desktop agent launches).

Nothing heavy happens before the handshake, and the first recall waits for as little as it can.
Once the MCP SDK is imported (the one cost nothing can overlap: importing it is plain Python,
and Python code in another thread would only slow it down), a background thread
(:class:`BackgroundOpen`) reads the settings and starts the embedding model loading (its graph
optimisation runs outside the GIL); the store and the engine open in that thread as soon as the
server is built, while the handshake runs (as for a read: an agent with no database yet, one per
agent, gets none made until its first write). The first tool call finds them ready or waits only for
what is left; MCP clients never time out waiting for start-up. A failure in the background is
left for the first tool call to report (it opens again and raises). Settings that cannot be used
do not end the process before the handshake either: a desktop client shows only "server
disconnected" for that, with the reason in a log file the user never sees. The server answers
instead, every tool (of both families) listed, and every call is an error naming the setting,
what is wrong and where it was set (reading them again, as ``open_engram`` does); the message
goes to stderr too, and the command exits with the error once the client closes. Logs go to
stderr; stdout carries only the protocol.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engram.errors import EngramError
from engram.interfaces.heap import freeze_for_exit

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.engine import Engram

log = logging.getLogger("engram.mcp")


class BackgroundOpen:
    """Settings, the model's load (``prepare``), then the engine once the server is built, in a
    thread from ``start()``. ``open_engram`` opens the engine a write needs; ``open_reading`` (by
    default the same) the one a read needs, which for an agent with no database yet (one per
    agent) is an empty engine that makes none (``root.build_reading_engram``)."""

    def __init__(self, settings: Callable[[], Settings], open_engram: Callable[[], Engram], *,
                 open_reading: Callable[[], Engram] | None = None,
                 prepare: Callable[[Settings], threading.Thread | None] | None = None) -> None:
        self._settings = settings
        self._open_engram = open_engram
        self._open_reading = open_reading or open_engram
        self._prepare = prepare
        self._lock = threading.Lock()
        self._engram: Engram | None = None
        self._thread = threading.Thread(target=self._open, name="engram-open", daemon=True)
        self._settings_read = threading.Event()
        self._served = threading.Event()
        self._closing = False
        self._preparing: threading.Thread | None = None

    def start(self) -> BackgroundOpen:
        self._thread.start()
        return self

    def served(self) -> None:
        """The server is built and answering: the engine may open now."""
        self._served.set()

    def _open(self) -> None:
        try:
            settings = self._settings()
        except Exception:  # settings() raises it again on the caller's thread
            return
        finally:
            self._settings_read.set()
        try:
            if self._prepare is not None:
                self._preparing = self._prepare(settings)
            self._served.wait()
            if not self._closing:
                # As a read: a launch writes nothing, and opening to write made the database of an
                # agent that has none yet (one per agent) for a session that might only read.
                self.engram(reading=True)
        except Exception:  # the first tool call opens again and reports the error to the client
            log.debug("opening engram in the background failed", exc_info=True)

    def settings(self) -> Settings:
        """The settings, once the thread has read them (raises what reading them raised)."""
        self._settings_read.wait()
        return self._settings()

    def engram(self, _request: Any = None, *, reading: bool = False) -> Engram:
        """The engine, opened once (the resolver the MCP server's tools call; it opens in the
        background at launch). ``reading``: the tool only reads, so while the agent has no
        database yet (one per agent) it is answered from an empty engine (``open_reading``), made
        per call and kept by nobody, so that a database made by another process meanwhile is seen
        at the next read; the first write opens the agent's engine (making its database), which
        then answers every call."""
        from engram.agent_databases import not_made_yet

        with self._lock:
            if self._engram is None:
                opened = self._open_reading() if reading else self._open_engram()
                if not_made_yet(opened):
                    return opened
                self._engram = opened
            return self._engram

    def close(self) -> None:
        """Wait for the background work, then close the engine (the model never left half loaded)."""
        self._closing = True
        self._served.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._preparing is not None:
            self._preparing.join()
        with self._lock:
            engram, self._engram = self._engram, None
        if engram is not None:
            wait = getattr(engram.embedder, "wait_warm_up", None)
            if wait is not None:
                wait()
            engram.close()


def run_stdio(opening: BackgroundOpen) -> EngramError | None:
    """Serve MCP on stdio until the client closes it (tools: ``server.mcp_tools``), then close
    what ``opening`` opened; ``opening`` is started here, once the SDK is imported. Returns the
    error reading the settings raised (served as every tool call's error), else None."""
    try:
        from engram.interfaces.mcp.server import build_server  # the SDK
        from engram.interfaces.present import error_text

        opening.start()
        unusable: EngramError | None = None
        try:
            tools = opening.settings().server.mcp_tools
        except EngramError as exc:
            # Which family the settings chose is unknown: offer both, so whichever tool the client
            # calls answers with the error rather than "unknown tool".
            unusable, tools = exc, "both"
            log.error("%s; serving MCP anyway, every tool call answers with this error", error_text(exc))
        server = build_server(opening.engram, tools=tools)
        opening.served()
        server.run("stdio")
    finally:
        opening.close()
        # Everything engram opened is closed now: the interpreter's shutdown need not walk the
        # heap (its full collections were most of the wait after the last answer: see heap.py).
        freeze_for_exit()
    return unusable
