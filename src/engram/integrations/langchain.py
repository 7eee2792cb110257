"""A LangChain retriever over engram's recall: ``EngramRetriever(engram=mem, k=4)``.

Each hit becomes a ``Document``: its content is the memory's content, its metadata the memory's
id, key, scope, category, type, tags, importance and the hit's ``score``. ``filters`` narrows
recall (category, type, tags, ...). ``touch`` decides whether retrieval counts as a use of the
memories (access mark and strengthening, see ``Engram.recall``); by default it does, as engram's
own context injection does (``recall.touch_on_recall``): what a chain reads into its context is
what the agent uses, and the lifecycle jobs purge memories that stay unused (hygiene's idle
knowledge, decay's never-recalled ones). ``touch=False`` makes a read a look. The async path runs
recall in a worker thread, so it never blocks the event loop.

As LangChain's vector-store retrievers take search kwargs per call, each field but ``engram`` can
be given per call and wins for that call: ``retriever.invoke(query, k=1)``. Any other keyword is
refused, naming it (a mistyped ``top_k`` or a vector store's ``filter`` would otherwise be ignored).
A blank query finds nothing (an empty list).
"""

from __future__ import annotations

import asyncio
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.integrations import ENGINE, checked_call, flag_option, missing, refuse_unknown
from engram.model import MAX_LINK_DEPTH, MAX_RECALL_LIMIT, Hit, parse_integer, parse_limit, parse_relevance

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
    touch: bool | None = None  # None: the engine's recall.touch_on_recall

    @checked_call("{owner}(engram=mem, k=4)")
    def __init__(self, *, engram: Engram | AsyncEngram, **fields: Any) -> None:
        """``engram``: the ``Engram`` (or ``AsyncEngram``, whose engine is used) recalled from;
        ``fields``: the search options (``k``, ``filters``, ...). Raises ``ValidationError``
        (engram's, a ``ValueError``) naming a field it refuses: a missing or wrong ``engram``, a
        bad search option (by the rules a call's options follow: ``k="5"`` and ``touch="no"`` are
        refused, not read as 5 and False), or a field the retriever does not have."""
        if isinstance(engram, AsyncEngram):  # its engine: recall runs in a worker thread anyway
            engram = engram.engram
        # LangChain's BaseRetriever ignores unknown fields: a mistyped ``top_k=2`` would leave k at 4, unsaid.
        refuse_unknown("EngramRetriever", fields, type(self).model_fields)
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", ENGINE)
        # The options are checked before pydantic sees them, as engram's own errors naming the
        # field: pydantic would read "5" as 5 and "no" as False, refuse "x" in its own words, and
        # wrap an error raised in a validator or model_post_init.
        fields.update(_checked({name: fields[name] for name in _SEARCH_OPTIONS if name in fields}))
        super().__init__(engram=engram, **fields)

    def _search_options(self, per_call: dict[str, Any]) -> dict[str, Any]:
        """Recall's arguments: the retriever's fields, with this call's keywords in their place."""
        unknown = sorted(set(per_call) - set(_SEARCH_OPTIONS) - _LANGCHAIN_OWN)
        if unknown:
            raise ValidationError(unknown[0], "is not a search option of EngramRetriever", list(_SEARCH_OPTIONS))
        options = _checked({name: per_call.get(name, getattr(self, name)) for name in _SEARCH_OPTIONS})
        options["limit"] = options.pop("k")
        return options

    def _recall(self, query: str, per_call: dict[str, Any]) -> list[Document]:
        options = self._search_options(per_call)
        if isinstance(query, str) and not query.strip():
            # A blank question finds nothing, as a vector-store retriever answers it (documents, not an
            # error that stops the chain) and as engram's other adapters read a blank query.
            return []
        result = self.engram.recall(query, **options)
        return [_document(hit) for hit in result]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        return self._recall(query, kwargs)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        return await asyncio.to_thread(self._recall, query, kwargs)


# Each may be given per call, as a vector-store retriever's search kwargs are.
_SEARCH_OPTIONS = ("k", "filters", "min_relevance", "depth", "touch")


def _checked(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` (some of ``_SEARCH_OPTIONS``) checked, the same made or per call; raises
    ``ValidationError`` naming the first refused. ``depth`` and a per-call ``touch`` are recall's to
    check; a retriever's ``touch`` is checked here, where None (the engine's setting) is allowed."""
    checked = dict(options)
    if "k" in checked:
        checked["k"] = parse_limit(checked["k"], MAX_RECALL_LIMIT, "k", paged=False)  # no offset here
    if checked.get("min_relevance") is not None:
        checked["min_relevance"] = parse_relevance(checked["min_relevance"])
    if checked.get("filters") is not None and not isinstance(checked["filters"], Filters):
        raise ValidationError("filters", f"got {type(checked['filters']).__name__}", "an engram Filters, or None")
    if "depth" in checked:
        checked["depth"] = parse_integer(checked["depth"], "depth", 0, MAX_LINK_DEPTH)
    if "touch" in checked:
        checked["touch"] = flag_option("touch", checked["touch"], "the engine's recall.touch_on_recall")
    return checked
# BaseRetriever.invoke hands its own ``verbose`` on with the caller's keywords: not a search option.
_LANGCHAIN_OWN = frozenset({"verbose"})
