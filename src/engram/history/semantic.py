"""The semantic store of exchanges (Clawless): each exchange embedded, recalled by meaning.

Rows live in ``history_exchanges`` (migrations 0002, 0007), in the memory database by default, each
belonging to one agent (an index acts for one agent; ``for_agent`` gives another's), each
with the embedding identity (``provider:model:dims``) it was made with; only rows of the current
identity are searched and ``warm`` re-embeds the others. Bounds: at most ``max_entries`` rows
per agent (FIFO: the oldest go first) and at most ``max_chars_per_entry`` characters embedded per
exchange. Rows hold a conversation's stored key (``telegram:42:``); recalled exchanges show it as
users write it (``telegram:42``, as ``History.conversations`` does), and ``add``/``forget_exchanges``
take either form back. Recall filters by agent and conversation first and then ranks exactly, so a chat with
few entries is never crowded out by other chats, which a KNN-then-filter search can do. On SQLite
the ranking runs inside the database with sqlite-vec, as Clawless does (``vec_distance_cosine``,
``ORDER BY … LIMIT k``: only the k best rows come back to Python, not every vector); where the
extension cannot load, and for a plain chat id (matched on the parsed key), numpy ranks the same
rows. Measured here at the default cap (1,000 rows of 384 floats, a loaded 2-core machine): ranking
an agent's whole index in SQL took 5-12 ms against 7-20 ms for fetching every vector into numpy;
one conversation's ~100 rows take 3-7 ms either way; a ``vec0`` table (``MATCH`` with a
conversation partition key) took 1-5 ms for one conversation but 30-40 ms for the whole index, so
it is no clear win at this size and would need a migration. The query's own embedding costs as much. Results
come back oldest first with a recap block, as Clawless's ``semantic-recall`` answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from engram.db.migrate import migrate
from engram.db.sqlite import Database
from engram.errors import DimensionError, ValidationError
from engram.history.base import DEFAULT_AGENT, MAX_POSITION, HistoryStore, check_agent
from engram.history.keys import key_or_chat, normal_key, parse_conversation_key, shown_key
from engram.history.recap import format_ranked_recap, pair_exchanges
from engram.model import Exchange, parse_integer
from engram.store.vectors import parse_identity_dims, unit


class ExchangeEmbedder(Protocol):
    """What this store needs of ``engram.embed``'s Embedder."""

    @property
    def identity(self) -> Any: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class SemanticRecall:
    hits: tuple[tuple[Exchange, float], ...]  # oldest first, with cosine similarity
    recap: str

    @property
    def exchanges(self) -> list[Exchange]:
        return [exchange for exchange, _ in self.hits]


class ExchangeIndex:
    def __init__(
        self,
        db: Database,
        embedder: ExchangeEmbedder,
        *,
        max_entries: int = 1000,
        max_chars_per_entry: int = 4000,
        max_recap_chars: int = 8000,
        owns_db: bool = False,
        agent: str = DEFAULT_AGENT,
    ) -> None:
        """Wrap a migrated database (see ``open``) for ``agent``."""
        self.db = db
        self.agent = check_agent(agent)
        self.embedder = embedder
        self.identity = str(embedder.identity)
        self.dims = parse_identity_dims(self.identity)
        self.max_entries = max_entries
        self.max_chars_per_entry = max_chars_per_entry
        self.max_recap_chars = max_recap_chars
        self._owns_db = owns_db

    @classmethod
    def open(cls, path: Path | str, embedder: ExchangeEmbedder, *, busy_timeout_ms: int = 30_000,
             key: str | None = None, **options: Any) -> ExchangeIndex:
        """Open (creating and migrating) the database at ``path`` (SQLCipher ``key`` when
        encrypted); raises ``StorageError``."""
        db = Database(path, busy_timeout_ms=busy_timeout_ms, key=key)
        migrate(db)
        return cls(db, embedder, owns_db=True, **options)

    def for_agent(self, agent: str) -> ExchangeIndex:
        """``agent``'s exchanges on the same connection, same embedder and bounds (not owning it)."""
        return type(self)(self.db, self.embedder, max_entries=self.max_entries,  # type: ignore[arg-type]
                          max_chars_per_entry=self.max_chars_per_entry, max_recap_chars=self.max_recap_chars,
                          agent=agent)

    def _text(self, exchange: Exchange) -> str:
        return f"User: {exchange.user}\nAssistant: {exchange.assistant}"[: self.max_chars_per_entry]

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape != (len(texts), self.dims):
            raise DimensionError("vector", f"embedder returned shape {vectors.shape}", f"({len(texts)}, {self.dims})")
        return vectors

    def add(self, exchanges: Sequence[Exchange]) -> int:
        """Embed and index exchanges not indexed yet (embedding runs outside the write lock);
        returns how many were added. Raises ``EmbeddingError``/``DimensionError``/``StorageError``."""
        fresh = {_fingerprint(self.agent, e): e for e in map(_stored, exchanges)}
        if not fresh:
            return 0
        known = self._known(list(fresh))
        todo = [(f, e) for f, e in fresh.items() if f not in known]
        if not todo:
            return 0
        # What the prune after the insert would delete at once is not embedded: beyond the newest
        # ``max_entries`` of the batch, or older than every row a full index keeps (an import of a
        # long history, its newest conversations first, embeds what stays, not all it adds).
        kept = {f for f, _ in sorted(todo, key=lambda fe: fe[1].at, reverse=True)[: self.max_entries]}
        cutoff = self._cutoff()
        todo = [(f, e) for f, e in todo if f in kept and (cutoff is None or e.at >= cutoff)]
        if not todo:
            return 0
        vectors = self._vectors([self._text(e) for _, e in todo])
        self._store([(self.agent, e.conversation, e.user, e.assistant, e.at, f, self.identity, unit(v).tobytes())
                     for (f, e), v in zip(todo, vectors, strict=True)])
        return len(todo)

    # --- storage (a PostgreSQL index overrides these: history/pg_semantic.py) -----------------
    def _known(self, fingerprints: list[str]) -> set[str]:
        """Which of ``fingerprints`` are indexed with the current identity."""
        with self.db.read() as conn:
            marks = ",".join("?" * len(fingerprints))
            return {r[0] for r in conn.execute(
                f"SELECT fingerprint FROM history_exchanges WHERE identity = ? AND fingerprint IN ({marks})",
                (self.identity, *fingerprints),
            )}

    def _cutoff(self) -> float | None:
        """The time of the oldest row a full index keeps (None while it has room): an exchange
        older than it would be pruned as soon as it was stored."""
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT created_at FROM history_exchanges WHERE agent = ? ORDER BY created_at DESC, id DESC"
                " LIMIT 1 OFFSET ?", (self.agent, self.max_entries - 1)).fetchone()
        return None if row is None else float(row[0])

    def _store(self, rows: list[tuple[Any, ...]]) -> None:
        """Insert (agent, conversation, user, assistant, at, fingerprint, identity, vector) rows, then prune."""
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO history_exchanges (agent, conversation, user_text, assistant_text, created_at, fingerprint,"
                " identity, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO UPDATE SET "
                "identity = excluded.identity, vector = excluded.vector",
                rows,
            )
            self._prune(conn)

    def _stale(self) -> list[Exchange]:
        """Exchanges indexed with another identity (or none)."""
        with self.db.read() as conn:
            return [Exchange(*row) for row in conn.execute(
                "SELECT conversation, user_text, assistant_text, created_at FROM history_exchanges "
                "WHERE agent = ? AND (identity IS NOT ? OR vector IS NULL)", (self.agent, self.identity)
            )]

    def _candidates(self, conversation: str | None) -> list[tuple[Any, ...]]:
        """(conversation, user, assistant, at, vector bytes) of every row searchable now."""
        where, params = "agent = ? AND identity = ? AND vector IS NOT NULL", [self.agent, self.identity]
        if conversation is not None:
            where += " AND conversation = ?"
            params.append(conversation)
        with self.db.read() as conn:
            return conn.execute(
                f"SELECT conversation, user_text, assistant_text, created_at, vector FROM history_exchanges WHERE {where}",
                params,
            ).fetchall()

    def _ranks_in_sql(self) -> bool:
        """Whether ``_nearest`` can rank here: the sqlite-vec extension loaded on this connection."""
        return bool(self.db.has_vec)

    def _nearest(self, conversation: str | None, query: np.ndarray, top_k: int) -> list[tuple[Any, ...]]:
        """(conversation, user, assistant, at, similarity) of the ``top_k`` rows closest to ``query``,
        ranked by sqlite-vec (only when ``_ranks_in_sql``)."""
        where, params = "agent = ? AND identity = ? AND vector IS NOT NULL", [self.agent, self.identity]
        if conversation is not None:
            where += " AND conversation = ?"
            params.append(conversation)
        # Rows are unit vectors: cosine distance = 1 - dot product. A query of zeros (an embedder's
        # answer for text of stopwords or symbols only) has no cosine: sqlite-vec gives NULL, which
        # was a TypeError; it scores 0 with every row, as numpy's ranking (PostgreSQL's) scores it.
        with self.db.read() as conn:
            return conn.execute(
                "SELECT conversation, user_text, assistant_text, created_at,"
                " COALESCE(1.0 - vec_distance_cosine(vector, ?), 0.0) AS score"
                f" FROM history_exchanges WHERE {where} ORDER BY score DESC, id LIMIT ?",
                [query.astype(np.float32).tobytes(), *params, top_k],
            ).fetchall()

    def _prune(self, conn: Any) -> None:
        conn.execute(
            "DELETE FROM history_exchanges WHERE agent = ? AND id NOT IN "
            "(SELECT id FROM history_exchanges WHERE agent = ? ORDER BY created_at DESC, id DESC LIMIT ?)",
            (self.agent, self.agent, self.max_entries),
        )

    def warm(self, store: HistoryStore, *, recent_per_conversation: int = 200) -> int:
        """Index the most recent exchanges of every conversation in ``store`` (start-up warming),
        at most ``max_entries`` overall; re-embeds rows of another embedding identity."""
        exchanges: list[Exchange] = []
        for key in store.conversations():
            exchanges.extend(pair_exchanges(key, store.get_recent(key, recent_per_conversation)))
        stale = self._stale()
        unique = {_fingerprint(self.agent, e): e for e in [*stale, *exchanges]}
        newest = sorted(unique.values(), key=lambda e: e.at)[-self.max_entries:]
        added = 0
        for start in range(0, len(newest), 64):
            added += self.add(newest[start:start + 64])
        return added

    def recall(self, query: str, *, conversation: str | None = None, top_k: int = 3) -> SemanticRecall:
        """The ``top_k`` exchanges closest to ``query`` (only ``conversation``'s when given: a
        ``channel:chat[:thread]`` key, or a plain chat id matching that chat on every channel),
        oldest first, with a recap block. Raises ``ValidationError`` and the embedder's errors."""
        if not isinstance(query, str) or not query.strip():
            raise ValidationError("query", "must not be empty", "some text")
        # Read as every other count is (2.0 passes, text is named as text); one past a 64-bit
        # integer asks for every exchange, and SQLite's LIMIT could not take it.
        top_k = min(parse_integer(top_k, "top_k", 1), MAX_POSITION)
        key, chat = (None, None) if conversation is None else key_or_chat(conversation)
        query_vector = None
        if chat is None and self._ranks_in_sql():
            query_vector = self._query_vector(query)
            nearest = self._nearest(key, query_vector, top_k)
            hits = sorted(((_recalled(row), float(row[4])) for row in nearest), key=lambda h: h[0].at)
            return SemanticRecall(tuple(hits), format_ranked_recap(hits, self.max_recap_chars))
        rows = self._candidates(key)
        if chat is not None:  # a plain chat id (Clawless): that chat on any channel; rows are bounded
            rows = [row for row in rows if parse_conversation_key(row[0]).chat == chat]
        if not rows:
            return SemanticRecall((), "")
        query_vector = self._query_vector(query) if query_vector is None else query_vector
        matrix = np.vstack([np.frombuffer(r[4], dtype=np.float32) for r in rows])
        scores = matrix @ query_vector
        best = np.argsort(-scores, kind="stable")[:top_k]
        hits = sorted(((_recalled(rows[i]), float(scores[i])) for i in best), key=lambda h: h[0].at)
        return SemanticRecall(tuple(hits), format_ranked_recap(hits, self.max_recap_chars))

    def _query_vector(self, query: str) -> np.ndarray:
        vector = unit(np.asarray(self.embedder.embed_query(query), dtype=np.float32))
        if vector.shape != (self.dims,):
            raise DimensionError("vector", f"query vector has shape {vector.shape}", f"({self.dims},)")
        return vector

    def count(self) -> int:
        with self.db.read() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM history_exchanges WHERE agent = ?", (self.agent,)).fetchone()[0])

    def forget_conversation(self, conversation: str) -> int:
        with self.db.write() as conn:
            return int(conn.execute("DELETE FROM history_exchanges WHERE agent = ? AND conversation = ?",
                                    (self.agent, normal_key(conversation))).rowcount)

    def forget_exchanges(self, exchanges: Sequence[Exchange]) -> int:
        """Remove these exchanges (matched exactly: conversation, time, both texts) from this
        agent's index; returns how many rows went. Raises ``StorageError``."""
        fingerprints = sorted({_fingerprint(self.agent, _stored(e)) for e in exchanges})
        return self._delete(fingerprints) if fingerprints else 0

    def _delete(self, fingerprints: list[str]) -> int:
        """Delete this agent's rows with these fingerprints; how many went."""
        with self.db.write() as conn:
            marks = ",".join("?" * len(fingerprints))
            return int(conn.execute(f"DELETE FROM history_exchanges WHERE agent = ? AND fingerprint IN ({marks})",
                                    (self.agent, *fingerprints)).rowcount)

    def close(self) -> None:
        if self._owns_db:
            self.db.close()


def _recalled(row: Sequence[Any]) -> Exchange:
    """A row (conversation, user, assistant, at, ...) as recall answers it: the key as users write
    it, which every door takes back (a door showing ``telegram:42:`` would be the odd one out)."""
    return Exchange(shown_key(row[0]), row[1], row[2], row[3])


def _stored(exchange: Exchange) -> Exchange:
    """``exchange`` with its key in the stored form, so a recalled exchange handed back names its row."""
    key = normal_key(exchange.conversation)
    return exchange if key == exchange.conversation else replace(exchange, conversation=key)


def _fingerprint(agent: str, exchange: Exchange) -> str:
    # The default agent's fingerprints are the ones written before agents were recorded.
    parts = (exchange.conversation, repr(exchange.at), exchange.user, exchange.assistant)
    raw = "\x1f".join(parts if agent == DEFAULT_AGENT else (agent, *parts))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()
