"""The key proposed from a memory's content keeps its words, in any language."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.ids import key_from_content


@pytest.mark.parametrize(("content", "key"), [
    ("User prefers Python for scripting", "user-prefers-python-scripting"),
    # Accented Latin letters lose the accent, not the word (was "alice-enjoys-past-de-nata", "m-ller-mag-k-se-und").
    ("Alice enjoys pastéis de nata", "alice-enjoys-pasteis-de-nata"),
    ("Müller mag Käse und Brötchen", "muller-mag-kase-und-brotchen"),
    ("Straße in Ærøskøbing", "strasse-ærøskøbing"),
    # Other scripts are kept as written, their marks too (was "memory": every such content proposed one key).
    ("東京に住んでいる", "東京に住んでいる"),
    ("Привет, мир", "привет-мир"),
    # A word keeps its combining marks (was split at each: "नमस-त-द-न-य-ह", "i-stanbul").
    ("नमस्ते दुनिया", "नमस्ते-दुनिया"),
    ("שָׁלוֹם עוֹלָם", "שָׁלוֹם-עוֹלָם"),
    ("İstanbul'da yaşıyorum", "istanbul-da-yasıyorum"),
    ("   ", "memory"),
])
def test_a_proposed_key_keeps_the_contents_words(content: str, key: str) -> None:
    assert key_from_content(content) == key


def test_remember_stores_the_proposed_key_and_finds_the_memory_by_it(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as mem:
        mem.remember("Müller mag Käse")
        mem.remember("東京に住んでいる")
        assert mem.get("muller-mag-kase").content == "Müller mag Käse"
        assert mem.get("東京に住んでいる").content == "東京に住んでいる"
