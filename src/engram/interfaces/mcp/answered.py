"""Every stdio request read before stdin ends is answered before the server stops.

The SDK's dispatcher takes the end of its read stream as the end of the connection: it cancels
the handlers still running and closes the write stream. A tool runs in a worker thread that a
cancel cannot stop, so the call finished (a ``remember`` stored its memory) and its answer was then
dropped on the way out: ``printf '...' | engram mcp`` lost the answer to every request still in
flight when its input ended, a write among them. ``AnsweredBeforeEnd`` stands between the
transport and the server: it counts the requests it passes on and the answers the server writes
(``writes``), and holds the end of the stream back until every request passed on has its answer
(or was cancelled by the client, which JSON-RPC says is never answered). The dispatcher then ends as
before, with nothing left to cancel; the stdio transport writes out what it was given before it
returns, so the process exits right after the last answer. The wait has no time limit, unlike the drains
proposed to the SDK (modelcontextprotocol/python-sdk#2678): every tool runs in a worker thread that
no cancel stops, so a limit would drop the answer and exit no sooner.

Requests that write are also kept in the order they were read (``writes``, given by the server:
a tool not marked read-only). The SDK runs every request in a task of its own, so two lines piped
at once (``remember`` then ``get`` of what it stored, or a client sending an agent's two tool calls
without waiting) ran together and the read was often answered first, from the store without the
write: a client lost its own write. JSON-RPC lets a server answer in any order, but one client on
one pipe expects what it wrote before to be there when it reads. So a write is passed on only once
every request read before it is answered, and nothing read after it is passed on until it is
answered; reads between two writes still run together. (A request waiting so stays unread; no
engram tool waits on the client mid-call, so nothing an earlier request needs is held back.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage

from engram.interfaces.mcp.wrapped_stream import WrappedStream


class AnsweredBeforeEnd(WrappedStream):
    """``read_stream`` (the transport's), whose end waits until every request it passed on is
    answered on ``writes`` (the write stream to give the server in place of ``write_stream``);
    a request ``in_order`` says writes is passed on in the order read (see above)."""

    def __init__(self, read_stream: Any, write_stream: Any,
                 in_order: Callable[[types.JSONRPCRequest], bool] = lambda request: False) -> None:
        super().__init__(read_stream)
        # Ids as the SDK correlates them ("7" and 7 are one), counted: a client may reuse an id.
        self._unanswered: Counter[types.RequestId] = Counter()
        self._none_left = anyio.Event()
        self._none_left.set()
        self.writes = _CountedWrites(write_stream, self._settled)
        self._in_order = in_order
        self._after_write = False  # the last request passed on writes: read nothing more before its answer

    def __aiter__(self) -> AnsweredBeforeEnd:
        return self

    async def __anext__(self) -> Any:
        if self._after_write:
            await self._none_left.wait()
            self._after_write = False
        try:
            item = await self._inner.__anext__()
        except StopAsyncIteration:
            await self._none_left.wait()
            raise
        if isinstance(item, SessionMessage):
            message = item.message
            if isinstance(message, types.JSONRPCRequest):
                if self._in_order(message):
                    await self._none_left.wait()  # every request read before it answered first
                    self._after_write = True
                self._unanswered[coerce_request_id(message.id)] += 1
                self._none_left = anyio.Event()
            elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                # A request the client cancelled gets no answer (JSON-RPC): nothing to wait for.
                cancelled = cancelled_request_id_from_params(message.params)
                if cancelled is not None:
                    self._settled(cancelled)
        return item

    def _settled(self, ident: types.RequestId) -> None:
        key = coerce_request_id(ident)
        if self._unanswered[key] > 0:
            self._unanswered[key] -= 1
            if self._unanswered[key] == 0:
                del self._unanswered[key]
        if not self._unanswered:
            self._none_left.set()


class _CountedWrites(WrappedStream):
    """The server's write stream: each answer (a result or an error with an id) settles its request
    once it is sent, or once sending it failed (a closed stdout answers nothing more: no wait)."""

    def __init__(self, write_stream: Any, settled: Any) -> None:
        super().__init__(write_stream)
        self._settled = settled

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        answer = isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None
        try:
            await self._inner.send(item)
        finally:
            if answer:
                self._settled(message.id)
