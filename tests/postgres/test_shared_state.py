"""With ``database_url`` set, everything an engram process keeps besides memories lives in the
shared PostgreSQL database too: conversation history (and its semantic index), the audit trail
and API tokens. Each test opens two independent engines/stores on one database, as two
processes on two hosts would, and checks that one sees what the other wrote."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.audit import AuditQuery, PostgresAuditLog
from engram.auth import PostgresTokenStore, TokenStore
from engram.config import Settings, load_settings
from engram.engine import Engram
from engram.errors import NotFoundError, ValidationError
from engram.history.pg_semantic import PgExchangeIndex
from engram.history.postgres import PostgresHistoryStore
from engram.root import open_history, open_tokens
from engram.testing.fakes import HashingEmbedder


def _settings(url: str, home: Path, **more: object) -> Settings:
    return load_settings(home=home, database_url=url, embeddings={"provider": "none"}, **more)


def test_database_url_puts_history_in_postgres(pg_url: str, tmp_path: Path) -> None:
    first = Engram.from_settings(_settings(pg_url, tmp_path / "host-a"))
    second = Engram.from_settings(_settings(pg_url, tmp_path / "host-b"))
    try:
        assert isinstance(first.history.store, PostgresHistoryStore)
        first.history.append("telegram:7", "user", "my cat is called Miso")
        first.history.append("telegram:7", "assistant", "Noted: Miso.")
        first.history.set_summary("telegram:7", "talked about the cat")
        assert [m.content for m in second.history.all("telegram:7:")] == ["my cat is called Miso", "Noted: Miso."]
        assert second.history.summary("telegram:7") == "talked about the cat"
        assert second.history.conversations() == ["telegram:7"]  # as written; stored as telegram:7:
        assert not (tmp_path / "host-a" / "memory.db").exists()  # nothing went to a local file
    finally:
        first.close()
        second.close()


def test_an_explicit_history_backend_is_kept(pg_url: str, tmp_path: Path) -> None:
    settings = _settings(pg_url, tmp_path, history={"backend": "inmemory"})
    history = open_history(settings, "default")
    try:
        assert history.store.name == "inmemory"
    finally:
        history.close()


def test_nul_in_a_message_is_refused_and_nothing_stored(pg_url: str) -> None:
    from engram.model import make_message

    store = PostgresHistoryStore.open(pg_url)
    try:
        with pytest.raises(ValidationError) as info:
            store.append("a:b", make_message("user", "bad\x00byte"))
        assert info.value.field == "content"
        assert store.count("a:b") == 0
    finally:
        store.close()


def test_semantic_recall_of_exchanges_is_shared(pg_url: str, tmp_path: Path) -> None:
    settings = _settings(pg_url, tmp_path)
    writer = open_history(settings, "default", embedder=HashingEmbedder())
    reader = open_history(settings, "default", embedder=HashingEmbedder(), warm=False)
    try:
        assert isinstance(writer.semantic, PgExchangeIndex)
        for user, answer in [("what is the capital of norway", "Oslo is the capital."),
                             ("recommend a pasta recipe", "Try carbonara with guanciale."),
                             ("how tall is mount everest", "About 8849 metres.")]:
            writer.append("web:u1", "user", user)
            writer.append("web:u1", "assistant", answer)
        writer.append("web:u2", "user", "pasta again please")
        writer.append("web:u2", "assistant", "Cacio e pepe then.")
        assert reader.semantic.count() == 4
        found = reader.semantic_recall("pasta recipe carbonara", key="web:u1", top_k=1)
        assert [e.assistant for e in found.exchanges] == ["Try carbonara with guanciale."]
        assert "carbonara" in found.recap
        assert reader.pop_newest("web:u1").content == "About 8849 metres."  # an undone answer is not recalled
        assert writer.semantic.count() == 3
        assert "8849" not in writer.semantic_recall("mount everest", key="web:u1", top_k=5).recap
        reader.purge("web:u1")
        assert writer.semantic.count() == 1 and writer.count("web:u1") == 0
        assert writer.semantic_recall("pasta", top_k=5).exchanges[0].conversation == "web:u2"
    finally:
        writer.close()
        reader.close()


def test_semantic_index_keeps_at_most_max_entries(pg_url: str, tmp_path: Path) -> None:
    settings = _settings(pg_url, tmp_path, history={"semantic_max_entries": 3})
    history = open_history(settings, "default", embedder=HashingEmbedder())
    try:
        for i in range(5):
            history.append("web:u1", "user", f"question {i}", created_at=float(i))
            history.append("web:u1", "assistant", f"answer {i}", created_at=float(i) + 0.5)
        assert history.semantic.count() == 3
        kept = history.semantic_recall("answer", top_k=10).exchanges
        assert [e.assistant for e in kept] == ["answer 2", "answer 3", "answer 4"]
    finally:
        history.close()


def test_semantic_index_embeds_only_what_its_bound_keeps(pg_url: str, tmp_path: Path) -> None:
    settings = _settings(pg_url, tmp_path, history={"semantic_max_entries": 2})
    embedder = HashingEmbedder()
    history = open_history(settings, "default", embedder=embedder)
    try:
        turn = lambda n, at: [{"role": "user", "content": f"q{n}", "created_at": at},  # noqa: E731
                              {"role": "assistant", "content": f"a{n}", "created_at": at + 0.5}]
        history.append_many("web:new", [*turn(1, 10.0), *turn(2, 11.0), *turn(3, 12.0)])
        assert embedder.calls == 2 and history.semantic.count() == 2  # the newest two of the batch
        history.append_many("web:old", [*turn(7, 1.0), *turn(8, 2.0)])
        assert embedder.calls == 2  # older than both kept: not embedded
        assert [e.assistant for e in history.semantic_recall("a", top_k=5).exchanges] == ["a2", "a3"]
    finally:
        history.close()


def test_a_query_embedded_as_zeros_scores_every_exchange_0_on_either_backend(pg_url: str, tmp_path: Path) -> None:
    # "🚀" holds no word the hashing embedder knows: its vector is all zeros. SQLite's sqlite-vec
    # ranked it as NULL (TypeError: an internal error); PostgreSQL's numpy ranking scores every
    # exchange 0, as a stopword query ("a") is used to list what the index keeps.
    histories = {"sqlite": open_history(load_settings(home=tmp_path / "sqlite", embeddings={"provider": "none"}),
                                        "default", embedder=HashingEmbedder()),
                 "postgres": open_history(_settings(pg_url, tmp_path / "pg"), "default", embedder=HashingEmbedder())}
    try:
        for history in histories.values():
            history.append("web:u1", "user", "how do I deploy?", created_at=1.0)
            history.append("web:u1", "assistant", "make deploy 🚀", created_at=2.0)
            for key in (None, "web:u1", "u1"):  # ranked in SQL, by conversation, by chat id (in numpy)
                recalled = history.semantic_recall("🚀", key=key)
                assert [(e.assistant, s) for e, s in recalled.hits] == [("make deploy 🚀", 0.0)], key
            assert [e.assistant for e in history.semantic_recall("deploy 🚀").exchanges] == ["make deploy 🚀"]
    finally:
        for history in histories.values():
            history.close()


def test_audit_trail_is_shared_and_persists(pg_url: str, tmp_path: Path) -> None:
    first = Engram.from_settings(_settings(pg_url, tmp_path / "a", agent="alice"))
    memory = first.remember("the deploy key rotates on Mondays", key="deploy-key").memory
    first.forget(memory.id, reason="rotated")
    first.close()
    second = Engram.from_settings(_settings(pg_url, tmp_path / "b", agent="alice"))
    try:
        trail = second.backend.audit_log()
        assert isinstance(trail, PostgresAuditLog)
        entries = trail.query(AuditQuery(memory="deploy-key"))
        assert [e.action for e in entries] == ["forgotten", "stored"]  # newest first
        assert entries[0].reason == "rotated" and entries[0].detail["content"] == "the deploy key rotates on Mondays"
        assert entries[0].seq > entries[1].seq
        assert trail.query(AuditQuery(action="stored", origin=entries[1].origin))[0].memory_id == memory.id
        assert trail.query(AuditQuery(since=entries[0].at + 1)) == []
        with pytest.raises(ValidationError):
            trail.query(AuditQuery(action="exploded"))
    finally:
        second.close()


def test_tokens_live_in_postgres_and_work_from_another_process(pg_url: str, tmp_path: Path) -> None:
    settings = _settings(pg_url, tmp_path)
    one, two = open_tokens(settings), open_tokens(settings)
    try:
        assert isinstance(one, PostgresTokenStore)
        assert not two.has_live_tokens()  # /metrics is open on a server with none
        token, info = one.create("alice", "laptop")
        assert two.has_live_tokens()
        seen = two.verify(token)
        assert seen is not None and (seen.id, seen.agent, seen.name) == (info.id, "alice", "laptop")
        assert two.verify(token[:-1] + ("x" if token[-1] != "x" else "y")) is None
        assert one.list("alice")[0].last_used_at is not None  # the verify above marked it used
        with pytest.raises(ValidationError):
            one.create("not a valid agent!")
        two.revoke(token)
        assert one.verify(token) is None and one.list() == [] and not one.has_live_tokens()
        assert one.list(include_revoked=True)[0].revoked_at is not None
        again, changed = one.revoke(info.id)  # already revoked: kept as it was, said so
        assert not changed and again.revoked_at == one.list(include_revoked=True)[0].revoked_at
        with pytest.raises(NotFoundError):
            one.revoke("nosuchid")
    finally:
        one.close()
        two.close()
    assert not (tmp_path / "auth.db").exists()


def test_sqlite_backend_keeps_tokens_in_its_file(tmp_path: Path) -> None:
    store = open_tokens(load_settings(home=tmp_path))
    try:
        assert type(store) is TokenStore
        token, _ = store.create("alice")
        assert store.list()[0].last_used_at is None
        assert store.verify(token) is not None
        assert store.list()[0].last_used_at is not None
    finally:
        store.close()


def test_recalls_are_in_the_shared_trail_and_bounded(pg_url: str, tmp_path: Path) -> None:
    from engram.audit import ReadTrail

    engram = Engram.from_settings(_settings(pg_url, tmp_path / "r", agent="reader"))
    try:
        trail = engram.backend.audit_log()
        engram.remember("the boiler is serviced in October", key="boiler")
        engram.recall("boiler service", mode="text")
        newest = trail.query(AuditQuery(action="recalled", limit=1))[0]
        assert newest.detail["query"] == "boiler service" and newest.detail["results"][0]["key"] == "boiler"
        for i in range(3):
            engram.recall(f"boiler {i}", mode="text")
        ReadTrail(trail, max_entries=2).log.prune_reads(2)
        assert [e.detail["query"] for e in trail.query(AuditQuery(action="recalled", limit=100))] == ["boiler 2", "boiler 1"]
    finally:
        engram.close()
