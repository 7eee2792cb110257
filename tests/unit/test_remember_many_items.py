"""``remember_many`` names the item at fault, whatever is wrong with it, and stores nothing: an
item that is not a mapping, a field ``remember`` does not take, or ``items`` that is one mapping
or one text rather than a list of them (each once raised Python's own error, naming no item)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import ValidationError


@pytest.fixture
def alice(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.for_agent("alice").remember("kept from before")
        yield engram.for_agent("alice")


@pytest.mark.parametrize(("items", "field", "allowed"), [
    ([{"content": "good"}, "not a mapping"], "items[1]", "a mapping"),
    ([{"content": "good"}, ["content", "x"]], "items[1]", "a mapping"),
    ([{"content": "good"}, {"content": "x", "bogus": 1}], "items[1].bogus", "content"),
    ([{"content": "good"}, {"tags": ["no content"]}], "items[1].content", "characters"),
    ({"content": "one mapping"}, "items", "a list"),
    ("one text", "items", "a list"),
])
def test_a_bad_item_is_named_and_nothing_is_stored(alice: Engram, items: Any, field: str, allowed: str) -> None:
    with pytest.raises(ValidationError) as raised:
        alice.remember_many(items)
    assert raised.value.field == field
    assert allowed in str(raised.value.allowed) and "make_draft" not in str(raised.value)
    assert [m.content for m in alice.list()] == ["kept from before"]
