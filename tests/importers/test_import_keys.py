"""Keys of imported records that propose one key (templated content): each gets the lowest suffix
free of the stored memories and of the import's earlier records, found without walking from
``-2`` again per record (which made a templated import quadratic)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.ids import key_from_content
from engram.store.sqlite import SqliteMemoryStore

TEA = "User said that they really like green tea, cup {}"
WALKS = "User mentioned going for long walks near the river, walk {}"


def _mem0(records: list[tuple[str, str]]) -> str:
    return json.dumps({"results": [
        {"id": record_id, "memory": content, "created_at": f"2025-04-01T10:{n // 60:02d}:{n % 60:02d}Z",
         "user_id": "alex"} for n, (record_id, content) in enumerate(records)]})


def test_a_templated_import_gets_the_lowest_free_suffixes_looking_each_stored_key_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tea, walks = key_from_content(TEA.format(0)), key_from_content(WALKS.format(0))
    assert tea == key_from_content(TEA.format(39)) != walks  # each template proposes one key
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alex") as mem:
        for key in (tea, f"{tea}-2", f"{tea}-3", f"{tea}-5"):  # -4 is free: the first record takes it
            mem.remember(f"stored by hand under {key}", key=key)
        looked_up: list[str] = []
        get = mem.store.get
        monkeypatch.setattr(mem.store, "get", lambda ref, *args, **kw: looked_up.append(ref) or get(ref, *args, **kw))
        records = [(f"tea-{i}", TEA.format(i)) for i in range(40)]
        records[10:10] = [(f"walk-{i}", WALKS.format(i)) for i in range(5)]  # the other template in between
        summary = mem.import_from(_mem0(records), "mem0", keep_agents=False)
        assert summary.imported == 45
        keys = {m.content: m.key for m in mem.store.iter_all()}
    expected_tea = [f"{tea}-{n}" for n in [4, *range(6, 45)]]  # -5 is stored, so skipped
    assert [keys[TEA.format(i)] for i in range(40)] == expected_tea
    assert [keys[WALKS.format(i)] for i in range(5)] == [walks] + [f"{walks}-{n}" for n in range(2, 6)]
    # The stored keys are looked up once each, then one free key per record: walking from -2 for
    # every record looked the four stored ones up again each time (~200 look-ups here).
    tea_lookups = [ref for ref in looked_up if ref.startswith(tea)]
    assert sorted(set(tea_lookups)) == sorted([tea, *(f"{tea}-{n}" for n in range(2, 45))])
    assert len(tea_lookups) == 44
