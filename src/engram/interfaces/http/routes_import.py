"""``POST /api/v1/import/{kind}``: another memory system's data into the caller's agent.

The body carries the source as a document's text (``{"text": ...}``: mem0 or mcp-memory-service
JSON, a Letta Agent File, a Zep dump, ChatGPT's or Claude.ai's conversations.json, the MCP memory
server's JSONL, Clawless's conversation history) or a folder's files (``{"files": {"MEMORY.md":
..., "memory/2026-03-02.md": ...}}``: OpenClaw, basic-memory, Clawless, an unzipped chat export).
Everything joins the calling agent (a caller never writes into another agent), and the server's
operator ``MEMORY.md`` is not touched over HTTP. Engine errors map to problems in one place.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import Field, model_validator

from engram.importers import detect_document, detect_files
from engram.interfaces import present
from engram.interfaces.http.routes_memory import Eng
from engram.interfaces.http.routing import Router
from engram.interfaces.http.schemas import Body, UsableText

router = Router(prefix="/api/v1", tags=["service"])


SOURCES = ('the source itself: a document\'s text in "text" (JSON or JSON lines), or a folder\'s files in "files" '
           '({"relative/path": "its text"}); no file on the server is read')


class ImportIn(Body):
    text: UsableText | None = Field(None, description="The source document (JSON or JSON lines).")
    files: dict[UsableText, UsableText] | None = Field(None, description="A source folder: relative path -> file text.")
    saved_memories: bool = Field(False, description="ChatGPT's export only: make its saved memories (its writes to "
                                 "the bio tool) core memories; ChatGPT may have changed or deleted them since.")

    @model_validator(mode="after")
    def _one_source(self) -> ImportIn:
        if (self.text is None) == (self.files is None):
            raise ValueError("give exactly one of text or files")
        return self


@router.post("/import/{kind}", summary="Import mem0, MCP memory, mcp-memory-service, Letta, Zep, ChatGPT, "
             "Claude.ai, OpenClaw, basic-memory or Clawless data (kind 'auto' detects it); all or nothing, "
             "idempotent")
def import_source(eng: Eng, kind: str, body: ImportIn) -> dict[str, Any]:
    source: str | dict[str, str] = body.text if body.text is not None else dict(body.files or {})
    # The engine names the document ``source`` and the kind ``from`` (the CLI's flag): here they
    # are the body's ``text`` or ``files`` and the path's ``kind``; what the engine allows besides
    # (a Path, ``engram import FILE``) is no HTTP body's, so a refused source says what this one takes.
    with present.wire_names({"source": "text" if body.text is not None else "files", "from": "kind"},
                            accepts={"source": SOURCES}):
        if kind == "auto":
            kind = detect_document(source) if isinstance(source, str) else detect_files(source)
        summary = eng.import_from(source, kind, keep_agents=False, operator_notes=False,
                                  saved_memories=body.saved_memories)
    return asdict(summary)
