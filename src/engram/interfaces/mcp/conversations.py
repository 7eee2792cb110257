"""Clawless's semantic recall over MCP: ``semantic_recall``, the earlier exchanges of the agent's
conversations that are like the input in front of it, and the recap block to put in a prompt.

Clawless's agent asks for them on demand (``POST /api/memory/semantic-recall``); an agent on MCP
calls this tool instead. It is offered with every tool family (``server.mcp_tools``), since no
other tool's name or shape it could clash with or stand in for, and answers what the HTTP route
answers through the same seam (``seams.semantic_recall``). The conversations are those of the
connection's agent: the agent comes from the connection, never from an argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from engram.engine import Engram
from engram.history.settings import MAX_RECAP_TOP_K
from engram.interfaces import present, seams
from engram.interfaces.bounds import bounded_integer
from engram.interfaces.mcp.annotations import READ
from engram.interfaces.mcp.errors import tool_errors

# The history names a chat id it refuses ``chatId`` (Clawless's field), a key ``key`` or one of its
# parts (``key.chat``): here each is ``chat_id``, the one value given.
CHAT_WIRE = dict.fromkeys(("key.channel", "key.chat", "key.thread", "chatId", "key"), "chat_id")
# As far as the history.recap_top_k setting goes (the library takes any number: one past every exchange).
RecapTopK = bounded_integer(1, MAX_RECAP_TOP_K)


def register(server: MCPServer, resolve: Callable[..., Engram]) -> None:
    @server.tool(name="semantic_recall", title="Recall earlier conversation exchanges", annotations=READ, description=(
        "Find earlier exchanges (a user message and the answer to it) of your conversations that are like the input "
        "in front of you, e.g. when the user refers to something said before. Returns `entries` (oldest first: "
        "userMessage, botResponse, chatId, platform, conversation, timestamp, score) and `recap`, a block ready to "
        "put in a prompt. Give chat_id to search one conversation only. Empty when nothing like it was said "
        "(or no embedding model is configured)."))
    def semantic_recall(
        query: Annotated[str, Field(description="The current input, e.g. the user's latest message.")],
        chat_id: Annotated[str | None, Field(description=(
            "Only this conversation: a chat id (\"42\": that chat on any channel) or a conversation key "
            "(\"telegram:42\", \"slack:C1:T7\"); default: every conversation of yours."))] = None,
        top_k: Annotated[RecapTopK | None, Field(description=(
            f"Most exchanges to return, 1 to {MAX_RECAP_TOP_K}; default: the history.recap_top_k setting "
            "(3 unless set)."))] = None,
    ) -> dict[str, Any]:
        with tool_errors(), present.wire_names(CHAT_WIRE):
            return seams.semantic_recall(resolve(reading=True), query, chat_id, top_k)
