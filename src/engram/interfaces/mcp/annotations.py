"""The MCP tool annotations engram's tools carry, so a client knows a read from a deletion.

Reads (recall, get, versions, list, semantic_recall) change no memory's content. Writes (remember, update) never lose
anything (an update keeps the previous content in the memory's history) and repeating one with
the same arguments changes nothing more. Forgetting and unlinking remove data. Every tool works on
the local memory only (closed world).
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DELETE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
LINK = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)  # unlink
