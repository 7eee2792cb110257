"""Fuzz: any content, key, tags and metadata round-trip through every file backend unchanged,
also after reopening the file (PostgreSQL: tests/postgres/test_fuzz_roundtrip.py; the memory files:
tests/files/test_files_edges.py's hostile corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from engram.engine import Engram
from tests.contract.test_memory_contract import BACKENDS
from tests.fuzz_inputs import FUZZ, contents, keys, metadata, store_and_check, tags


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_fields_round_trip_through_every_backend(backend: str, tmp_path: Path) -> None:
    engram = Engram(BACKENDS[backend](tmp_path), agent="fuzz")

    @FUZZ
    @given(content=contents, key=keys, tag_list=tags, meta=metadata)
    def check(content: str, key: str, tag_list: list[str], meta: dict) -> None:
        memory_id = store_and_check(engram, content, key, tag_list, meta)
        if backend != "inmemory":  # and after reopening the file
            reopened = Engram(BACKENDS[backend](tmp_path), agent="fuzz")
            assert reopened.get(memory_id).to_dict() == engram.get(memory_id).to_dict()
            reopened.close()

    try:
        check()
    finally:
        engram.close()
