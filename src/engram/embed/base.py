"""The embedding contract and the one wrapper every caller uses.

A provider implements the minimum: an ``identity`` and one ``embed_batch`` call that turns a list
of texts into vectors. Everything else lives here, once: splitting work into batches, retrying
transient failures with exponential backoff (honouring a server's ``Retry-After``), checking that
every vector has the identity's size, L2-normalising rows, and reading from / writing to an
optional persistent cache. Providers signal a failure worth retrying by raising
:class:`TransientEmbeddingError`; any other :class:`~engram.errors.EmbeddingError` is final.

The identity (``provider:model:dims``) travels with the vectors so a store can refuse vectors of
another model or size before any write.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from engram.embed.coalesce import Coalescer
from engram.errors import DimensionError, EmbeddingError, ValidationError

if TYPE_CHECKING:
    from engram.embed.cache import EmbeddingCache

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbeddingIdentity:
    """Which model made a vector: stored beside vectors as ``provider:model:dims``."""

    provider: str
    model: str
    dims: int

    def __post_init__(self) -> None:
        if not self.provider or ":" in self.provider:
            raise ValidationError("provider", f"{self.provider!r} is empty or contains ':'")
        if not self.model:
            raise ValidationError("model", "is empty")
        if not isinstance(self.dims, int) or self.dims <= 0:
            raise ValidationError("dims", f"{self.dims!r} is not a positive integer")

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}:{self.dims}"

    @classmethod
    def parse(cls, text: str) -> EmbeddingIdentity:
        """Read ``provider:model:dims``; the model part may itself contain ':' (``nomic-embed-text:v1.5``).

        Raises:
            ValidationError: the text is not of that shape.
        """
        provider, sep, rest = text.partition(":")
        model, sep2, dims = rest.rpartition(":")
        if not sep or not sep2 or not dims.isdigit():
            raise ValidationError("embedding identity", f"{text!r} is malformed", "provider:model:dims")
        return cls(provider, model, int(dims))


@runtime_checkable
class EmbeddingProvider(Protocol):
    """What a provider implements: its identity and one batch call."""

    identity: EmbeddingIdentity

    def embed_batch(self, texts: list[str]) -> Sequence[Sequence[float]] | np.ndarray:
        """Vectors for ``texts``, one per text, in order. Raises EmbeddingError (or its
        TransientEmbeddingError subclass for failures worth retrying)."""
        ...


class TransientEmbeddingError(EmbeddingError):
    """A failure worth retrying: HTTP 429 or 5xx, a timeout, a dropped connection.

    ``retry_after`` is the server's requested wait in seconds, when it sent one.
    """

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class Embedder:
    """Embeds texts with a provider: batching, retries, dimension checks, normalisation, caching.

    Thread-safe as long as the provider is (the cache has its own lock).
    """

    def __init__(
        self,
        provider: EmbeddingProvider,
        *,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if batch_size < 1:
            raise ValidationError("batch_size", f"{batch_size} is below 1", ">= 1")
        if max_retries < 0:
            raise ValidationError("max_retries", f"{max_retries} is negative", ">= 0")
        self.provider = provider
        self.identity: EmbeddingIdentity = provider.identity
        self.batch_size = batch_size
        self.cache = cache
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None  # warm_up_in_background's thread
        # Document batches from concurrent callers (e.g. many clients storing) share model calls.
        self._documents = Coalescer(lambda texts: self._checked(self._call(texts), len(texts)), batch_size)

    def __repr__(self) -> str:
        return f"Embedder({self.identity})"

    def close(self) -> None:
        """Close the persistent cache's file (the engine does at its close); the cache opens it again
        on its next use, and the model stays loaded (the process shares it)."""
        if self.cache is not None:
            self.cache.close()

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Vectors for ``texts`` as float32 ``(n, dims)``, each row of unit length.

        ``progress(done, total)`` is called after each batch (cached texts count as done at once).

        Raises:
            ValidationError: a text is not a string.
            DimensionError: the provider returned vectors of another size than its identity says.
            EmbeddingError: the provider failed after its retries.
        """
        if isinstance(texts, str):
            raise ValidationError("texts", "a single string was given where a list is expected")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise ValidationError(f"texts[{i}]", f"is {type(t).__name__}, not str")
        return self._embed(texts, progress, query=False)

    def warm_up(self) -> None:
        """Load the provider's model now (servers do it in the background once they listen), so
        the first recall does not wait for it; a provider with nothing to load does nothing."""
        warm = getattr(self.provider, "warm_up", None)
        if warm is not None:
            warm()

    def warm_up_in_background(self) -> threading.Thread:
        """Start :meth:`warm_up` in a daemon thread and return it: a fresh process loads the model
        while it opens the store and searches full text (the model's load runs outside the GIL).
        A failure is only logged: the first embedding call loads again and raises it. Join the
        thread before the process exits (``wait_warm_up``): a model half loaded at exit can crash
        the interpreter's shutdown."""
        def warm() -> None:
            try:
                self.warm_up()
            except Exception:  # the edge of a background thread: the first call reports it
                log.debug("loading the embedding model in the background failed", exc_info=True)

        thread = threading.Thread(target=warm, name="engram-model-load", daemon=True)
        self._warming = thread
        thread.start()
        return thread

    @property
    def warming(self) -> bool:
        """Whether a :meth:`warm_up_in_background` is still loading the model."""
        return self._warming is not None and self._warming.is_alive()

    def wait_warm_up(self) -> None:
        """Wait for a :meth:`warm_up_in_background` still loading (returns at once otherwise)."""
        if self._warming is not None:
            self._warming.join()

    def embed_query(self, text: str) -> np.ndarray:
        """One vector, float32 ``(dims,)``, unit length, for a search query. Raises as :meth:`embed`.

        Uses the provider's ``embed_query`` when it has one (the local model runs queries on one
        thread); otherwise the same call as :meth:`embed`.
        """
        if not isinstance(text, str):
            raise ValidationError("text", f"is {type(text).__name__}, not str")
        return self._embed([text], None, query=True)[0]

    def _embed(
        self, texts: list[str], progress: Callable[[int, int], None] | None, *, query: bool
    ) -> np.ndarray:
        dims = self.identity.dims
        out = np.empty((len(texts), dims), dtype=np.float32)
        if not texts:
            return out
        ident = str(self.identity)
        todo = list(range(len(texts)))
        if self.cache is not None:
            found = self.cache.get_many(ident, texts)
            todo = []
            for i, t in enumerate(texts):
                vec = found.get(t)
                if vec is not None and vec.shape == (dims,):
                    out[i] = vec
                else:
                    todo.append(i)
        total = len(texts)
        done = total - len(todo)
        if progress is not None and done:
            progress(done, total)

        # Identical texts within one call are embedded once.
        unique: dict[str, list[int]] = {}
        for i in todo:
            unique.setdefault(texts[i], []).append(i)
        # Batches of similar length waste less work on padding (local models pad to the longest).
        pending = sorted(unique, key=len)
        query_fn = getattr(self.provider, "embed_query", None) if query else None
        for start in range(0, len(pending), self.batch_size):
            batch = pending[start : start + self.batch_size]
            raw = self._checked(self._call(batch, query_fn), len(batch)) if query else self._documents(batch)
            vectors = self._normalise(raw)
            for text, vec in zip(batch, vectors, strict=True):
                for i in unique[text]:
                    out[i] = vec
            if self.cache is not None:
                self.cache.put_many(ident, batch, vectors)
            done += sum(len(unique[t]) for t in batch)
            if progress is not None:
                progress(done, total)
        return out

    # -- internals -------------------------------------------------------------------------

    def _call(self, batch: list[str], query_fn: Callable[[str], object] | None = None) -> object:
        attempt = 0
        while True:
            try:
                if query_fn is not None and len(batch) == 1:
                    return [query_fn(batch[0])]
                return self.provider.embed_batch(batch)
            except TransientEmbeddingError as exc:
                if attempt >= self.max_retries:
                    tries = "1 attempt" if attempt == 0 else f"{attempt + 1} attempts"
                    raise EmbeddingError(f"{self.identity}: gave up after {tries}: {exc}") from exc
                delay = min(self.max_backoff_s, self.backoff_s * (2**attempt))
                delay *= 0.5 + random.random() / 2  # jitter so clients do not retry in lockstep
                if exc.retry_after is not None:
                    if exc.retry_after > self.max_retry_after_s:
                        raise EmbeddingError(
                            f"{self.identity}: the server asked to wait {exc.retry_after:.0f}s "
                            f"(more than {self.max_retry_after_s:.0f}s): {exc}"
                        ) from exc
                    delay = max(delay, exc.retry_after)
                log.warning(
                    "%s: transient failure (%s); retry %d in %.2fs", self.identity, exc, attempt + 1, delay
                )
                self._sleep(delay)
                attempt += 1

    def _checked(self, raw: object, expected: int) -> np.ndarray:
        try:
            arr = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self.identity}: provider returned vectors that are not numbers") from exc
        if arr.ndim != 2 or arr.shape[0] != expected:
            raise EmbeddingError(f"{self.identity}: provider returned {arr.shape} for {expected} texts")
        if arr.shape[1] != self.identity.dims:
            raise DimensionError(
                "embedding",
                f"{self.identity.provider} returned {arr.shape[1]}-d vectors",
                f"{self.identity.dims} dimensions ({self.identity})",
            )
        if not np.all(np.isfinite(arr)):
            raise EmbeddingError(f"{self.identity}: provider returned NaN or infinite values")
        return arr

    @staticmethod
    def _normalise(arr: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (arr / norms).astype(np.float32, copy=False)
