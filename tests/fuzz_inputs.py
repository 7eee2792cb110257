"""What the fuzz suite feeds engram: hypothesis strategies for memory fields and a corpus of
hostile inputs, plus the round-trip check every backend and the memory files must pass.

The strategies draw any Unicode the model accepts (everything but lone surrogates and NUL, which
are refused with a ``ValidationError`` and tested as such), so a store or a file format that
loses or changes a character fails here with the smallest example hypothesis can find.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engram.engine import Engram
from engram.model import parse_tags

# Bounded so the suite takes the same, small time in CI every run (derandomised: the same
# examples each run); ENGRAM_FUZZ_EXAMPLES raises it for a longer hunt.
EXAMPLES = int(os.environ.get("ENGRAM_FUZZ_EXAMPLES", "10"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_ANY = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_PRINTABLE = st.characters(blacklist_categories=("Cs", "Cc"))

HOSTILE = {
    "fts operators": 'NEAR(a b) OR "unclosed * ^prefix -minus (group) AND NOT col:val {x y}',
    "quotes": "it's \"quoted\" `back` 'single''",
    "path traversal": "../../../etc/passwd",
    "windows traversal": "..\\..\\windows\\system32",
    "encoded traversal": "%2e%2e%2f%2e%2e%2fetc",
    "marker": "pasted: <!-- id:x1 key:zz --> end",
    "control characters": "bell \x07 escape \x1b[2J\x1b]0;title\x07 cr \r del \x7f c1 \x9b",
    "markup": "[bold]x[/bold] [/red] [link=file:///etc/passwd]y[/link]",
    "sql": "'; DROP TABLE memories; --",
    "unicode": "zero\u200bwidth rtl\u202eevil bom\ufeff emoji 🧠 combining e\u0301",
    "huge": "word " * 1600 + "x",  # 8001 characters: one past the default content limit
}
UNSTORABLE = {"lone surrogate": "lone \ud800 surrogate", "nul": "nul \x00 byte"}


def nested(depth: int) -> dict[str, Any]:
    """A JSON object nested ``depth`` levels deep."""
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


contents = st.one_of(st.text(_ANY, min_size=1, max_size=300), st.sampled_from(list(HOSTILE.values())[:-1])
                     ).filter(lambda t: t.strip())
keys = st.text(_PRINTABLE, min_size=1, max_size=60).filter(lambda t: t.strip())
tags = st.lists(st.text(_PRINTABLE.filter(lambda c: c != ","), min_size=1, max_size=20)
                .filter(lambda t: t.strip()), max_size=4)
def metadata_with(floats: st.SearchStrategy[float]) -> st.SearchStrategy[dict[str, Any]]:
    """JSON objects (nested lists and objects) whose numbers include ``floats``."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), floats, st.text(_ANY, max_size=40))
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(_ANY, max_size=10), inner, max_size=3)), max_leaves=8)
    return st.dictionaries(st.text(_ANY, max_size=20), values, max_size=4)


metadata = metadata_with(st.floats(allow_nan=False, allow_infinity=False))


def expected(content: str, tag_list: list[str], meta: dict[str, Any]) -> tuple[str, tuple[str, ...], Any]:
    """What a stored memory must read back as: content as given, tags normalised, metadata as JSON."""
    return content, parse_tags(tag_list), json.loads(json.dumps(meta))


def store_and_check(engram: Engram, content: str, key: str, tag_list: list[str], meta: dict[str, Any]) -> str:
    """Store one memory and read it back equal; returns its id."""
    result = engram.remember(content, key=key, tags=tag_list, metadata=meta)
    stored = engram.get(result.memory.id)
    want_content, want_tags, want_meta = expected(content, tag_list, meta)
    assert stored.content == want_content
    if result.action != "duplicate":  # identical content in the scope is kept once, under its first key
        assert stored.key == key.strip(), (stored.key, key)
        assert stored.tags == want_tags, (stored.tags, want_tags)
        assert stored.metadata == want_meta, (stored.metadata, want_meta)
    return stored.id
