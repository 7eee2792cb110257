"""Vectors after the fact: ``embed_missing`` embeds the memories stored without one (the model failed,
or none was configured then); ``reindex`` drops every vector and embeds all again after a model change.

A batch the model fails, or whose vectors the store cannot keep (it holds another model's), ends
the pass with a warning rather than an error (``_embed``): the memories stay stored and full text
finds them. Embedding on the write path is ``engram.writes``'s.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engram.errors import ConfigError, EngramError
from engram.model import Memory
from engram.writes import embed_texts, identity_warning, not_embedded


class _Reindexing:
    """``Engram``'s embedding of memories already stored."""

    def _embed(self, memories: Sequence[Memory]) -> list[str]:
        """Embed and store vectors for ``memories``; failures become warnings, never lost writes."""
        embedder = self.writes.embedder  # the writer's: None when the store keeps nothing
        if embedder is None or not memories:
            return []
        warning = identity_warning(self.store, embedder)
        if warning is not None:
            return [warning]
        try:
            vectors = embed_texts(embedder, [(m.content, m.search_context) for m in memories])
        except EngramError as exc:
            return [not_embedded(exc)]
        self.store.set_vectors(str(embedder.identity), list(zip([m.id for m in memories], vectors, strict=True)))
        return []

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Drop every stored vector and embed all memories again with the current embedder
        (after a model change). Returns how many were embedded; raises ``ConfigError`` when no
        embedder is configured."""
        self.writes.refuse_when_closed()
        if self.embedder is None:
            raise ConfigError("reindex needs an embedder: set embeddings.provider (it is 'none')")
        total = self.store.stats().memories
        self.store.clear_vectors()
        done = self.embed_missing(lambda done, _: progress(done, total) if progress else None)
        self.backend.warm()  # build a vector index now rather than in the next recall
        return done

    def embed_missing(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory that has no vector yet; returns how many were embedded.
        ``progress(done, total)`` is called after each batch of 256."""
        self.writes.refuse_when_closed()
        if self.embedder is None:
            return 0
        total = 0
        if progress:  # each memory holds at most one vector: the store's figures tell how many lack one
            figures = self.store.stats()
            total = max(figures.memories - figures.vectors, 0)
        done = 0
        while batch := self.store.missing_vectors(limit=256):
            if self._embed(batch):
                break
            done += len(batch)
            if progress:
                progress(done, max(total, done))  # a memory stored meanwhile is embedded too
        return done
