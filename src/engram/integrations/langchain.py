"""A LangChain retriever over engram's recall: ``EngramRetriever(engram=mem, k=4)``.

Each hit becomes a ``Document``: its content is the memory's content, its metadata the memory's
id, key, scope, category, type, tags, importance and the hit's ``score``. ``filters`` narrows
recall (category, type, tags, ...). ``touch`` (default False) decides whether retrieval counts as
a use of the memories (access mark and strengthening, see ``Engram.recall``): a chain that reads
context on every turn would otherwise strengthen whatever it happens to read. The async path runs
recall in a worker thread, so it never blocks the event loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from engram.engine import Engram, Filters
from engram.integrations import missing
from engram.model import Hit

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("langchain", "langchain-core") from exc


def _document(hit: Hit) -> Document:
    m = hit.memory
    return Document(page_content=m.content, id=m.id, metadata={
        "id": m.id, "key": m.key, "scope": str(m.scope), "category": m.category.value, "type": m.type,
        "tags": list(m.tags), "importance": m.importance, "score": hit.score, "created_at": m.created_at})


class EngramRetriever(BaseRetriever):
    """The memories most relevant to a query, as LangChain documents."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    engram: Engram
    k: int = 4
    filters: Filters | None = None
    min_relevance: float | None = None
    depth: int = 0
    touch: bool = False

    def _recall(self, query: str) -> list[Document]:
        result = self.engram.recall(query, limit=self.k, filters=self.filters, min_relevance=self.min_relevance,
                                    depth=self.depth, touch=self.touch)
        return [_document(hit) for hit in result]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        return self._recall(query)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await asyncio.to_thread(self._recall, query)
