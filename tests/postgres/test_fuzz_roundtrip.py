"""Fuzz: any content, key, tags and metadata round-trip through PostgreSQL unchanged (JSON and
text columns hold what SQLite and the JSON file hold)."""

from __future__ import annotations

from hypothesis import given

from engram.engine import Engram
from tests.fuzz_inputs import FUZZ, contents, keys, metadata, store_and_check, tags


def test_fields_round_trip_through_postgres(pg_url: str) -> None:
    from engram.db.postgres import PgDatabase
    from engram.store.postgres import PostgresMemoryStore

    engram = Engram(PostgresMemoryStore(PgDatabase.connect(pg_url)), agent="fuzz")

    @FUZZ
    @given(content=contents, key=keys, tag_list=tags, meta=metadata)
    def check(content: str, key: str, tag_list: list[str], meta: dict) -> None:
        store_and_check(engram, content, key, tag_list, meta)

    try:
        check()
    finally:
        engram.close()
