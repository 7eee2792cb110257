"""A Tantivy full-text index beside a database: candidates for ranked full text on large stores.

Tantivy finds a query's best rows with block-max WAND, whose cost does not grow with the number
of rows a common term matches, unlike FTS5's ``bm25()`` (which scores every match). Its scores
are not FTS5's (BM25 per field, Snowball stemming), so this index only *proposes* rows: the
store scores them with FTS5's formula (``store/bm25.py``) and filters them in SQL, so scores,
scopes and forgotten memories are decided by the database, never by this file.

Documents are keyed by the memory's rowid and carry a hash of its id (to notice a rowid SQLite
reused after the newest rows were deleted). Fields: ``body`` holds the key twice (FTS5 weighs key
matches 2), the content and the time words; ``context`` the search context (weight 0.3); ``scope``
the agent and session, for a filtered search when most of the best rows belong to other scopes.

The folder is ``<database>.tantivy`` with a JSON sidecar ``<database>.tantivy.json`` saying how
far the index has caught up with the database (``store/sqlite_text.py`` keeps it so).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engram.errors import StorageError

_FORMAT = 1
_ANALYZER = "engram_en"
CONTEXT_BOOST = 0.3
SCOPE_SEPARATOR = "\x1f"


def available() -> bool:
    """Whether tantivy is installed (the ``fulltext`` extra)."""
    try:
        import tantivy  # noqa: F401
    except ImportError:
        return False
    return True


def id_hash(memory_id: str) -> int:
    """A signed 64-bit hash of a memory id (fits tantivy's i64 fast field)."""
    return int.from_bytes(hashlib.blake2b(memory_id.encode(), digest_size=8).digest(), "big", signed=True)


def scope_token(agent: str, session: str) -> str:
    return f"{agent}{SCOPE_SEPARATOR}{session}"


@dataclass(slots=True)
class TextIndexMeta:
    """How far the index has caught up: rows up to ``covered`` (whose id hashes to ``covered_id``),
    ``memory_versions`` rows up to ``versions``, ``memory_vectors`` rows up to ``vectors`` and
    ``memory_reindex`` rows up to ``reindex`` (a sidecar written before it had none: 0, all read)."""

    covered: int = 0
    covered_id: int = 0
    versions: int = 0
    vectors: int = 0
    reindex: int = 0
    format: int = _FORMAT


@dataclass(frozen=True, slots=True)
class TextRow:
    rowid: int
    memory_id: str
    agent: str
    session: str
    key: str
    content: str
    search_context: str
    time_words: str


class TextIndex:
    """The Tantivy index at ``path`` (a folder), opened or created. Raises: StorageError."""

    def __init__(self, path: Path) -> None:
        import tantivy

        self._tantivy = tantivy
        self.path = path
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("rowid", indexed=True, fast=True)
        builder.add_integer_field("idh", fast=True)
        builder.add_text_field("scope", tokenizer_name="raw", index_option="basic")
        builder.add_text_field("body", tokenizer_name=_ANALYZER, index_option="freq")
        builder.add_text_field("context", tokenizer_name=_ANALYZER, index_option="freq")
        self.schema = builder.build()
        self.analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
        try:
            path.mkdir(parents=True, exist_ok=True)
            self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        except (OSError, ValueError) as exc:
            raise StorageError(f"cannot open the full-text index {path}: {exc}") from exc
        self.index.register_tokenizer(_ANALYZER, self.analyzer)

    # --- reading ---------------------------------------------------------------------------
    def tokens(self, term: str) -> list[str]:
        return list(self.analyzer.analyze(term))

    def search(self, terms: Sequence[str], k: int, scopes: Sequence[tuple[str, str]] | None = None) -> list[int]:
        """Rowids of the ``k`` best documents for ``terms`` (already tokens of this index), best
        first by Tantivy's BM25; with ``scopes``, only documents of those (agent, session) pairs."""
        tantivy = self._tantivy
        should = tantivy.Occur.Should
        clauses: list[tuple[Any, Any]] = []
        for token in dict.fromkeys(terms):
            clauses.append((should, tantivy.Query.term_query(self.schema, "body", token, index_option="freq")))
            clauses.append((should, tantivy.Query.boost_query(
                tantivy.Query.term_query(self.schema, "context", token, index_option="freq"), CONTEXT_BOOST)))
        if not clauses or k <= 0:
            return []
        query = tantivy.Query.boolean_query(clauses)
        if scopes is not None:
            allowed = tantivy.Query.term_set_query(self.schema, "scope", [scope_token(a, s) for a, s in scopes])
            query = tantivy.Query.boolean_query([
                (tantivy.Occur.Must, query), (tantivy.Occur.Must, tantivy.Query.const_score_query(allowed, 0.0)),
            ])
        searcher = self.index.searcher()
        hits = searcher.search(query, k, count=False).hits
        if not hits:
            return []
        return [int(v) for v in searcher.fast_field_values("rowid", [address for _, address in hits])]

    def indexed_id(self, rowid: int) -> int | None:
        """The id hash indexed for ``rowid``, or None when it holds no live document."""
        searcher = self.index.searcher()
        hits = searcher.search(self._tantivy.Query.term_query(self.schema, "rowid", rowid), 1, count=False).hits
        if not hits:
            return None
        return int(searcher.fast_field_values("idh", [hits[0][1]])[0])

    def __len__(self) -> int:
        return int(self.index.searcher().num_docs)

    # --- writing ---------------------------------------------------------------------------
    def write(self, rows: Iterable[TextRow], replace: set[int], *, replace_above: int | None = None,
              threads: int = 1) -> int:
        """Add ``rows`` and commit, first deleting the documents of the rowids in ``replace`` and,
        with ``replace_above``, of every rowid above it (0: every document).
        Returns the number added. Raises: StorageError (another process holds the writer)."""
        tantivy = self._tantivy
        try:
            writer = self.index.writer(heap_size=64_000_000 * max(threads, 1), num_threads=threads)
        except ValueError as exc:
            raise StorageError(f"the full-text index {self.path} is being written by another process: {exc}") from exc
        added = 0
        if replace_above is not None:
            writer.delete_documents_by_query(tantivy.Query.range_query(
                self.schema, "rowid", tantivy.FieldType.Integer, replace_above, None, include_lower=False))
        for rowid in replace:
            writer.delete_documents_by_term("rowid", rowid)
        for row in rows:
            writer.add_document(tantivy.Document(
                rowid=row.rowid, idh=id_hash(row.memory_id), scope=scope_token(row.agent, row.session),
                body=f"{row.key} {row.key} {row.content} {row.time_words}", context=row.search_context or "",
            ))
            added += 1
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        return added

    # --- what it covers --------------------------------------------------------------------
    def read_meta(self) -> TextIndexMeta:
        """The sidecar; a missing or unreadable one covers nothing (everything is indexed again)."""
        return read_meta(self.path) or TextIndexMeta()

    def write_meta(self, meta: TextIndexMeta) -> None:
        """Replace the sidecar atomically. Raises: StorageError."""
        target = _sidecar(self.path)
        try:
            fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(asdict(meta)))
            os.replace(tmp, target)
        except OSError as exc:
            raise StorageError(f"cannot save the full-text index state {target}: {exc}") from exc


def read_meta(path: Path) -> TextIndexMeta | None:
    """The sidecar of the index at ``path``, or None when there is none (or it cannot be read:
    the index is then rebuilt whole at its next catch-up). Reads no Tantivy file."""
    try:
        meta = TextIndexMeta(**json.loads(_sidecar(path).read_text("utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    return meta if meta.format == _FORMAT else None


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")
