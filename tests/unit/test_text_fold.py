"""``engram.text.fold`` is SQLite FTS5's unicode61 fold (remove_diacritics=1), taken from the tokenizer
itself code point by code point, so the backends that fold by table (in-memory, JSON file,
PostgreSQL's step 0012, which tests/postgres/test_fold_diacritics.py pins to this one) match it."""

from __future__ import annotations

import unicodedata

from engram import text
from engram.db.sqlite import driver

# Every letter unicode61 folds lies below U+2200; the rest of the BMP is checked to be left alone.
_CODE_POINTS = [cp for cp in range(0x80, 0x10000) if not 0xD800 <= cp < 0xE000]


def fts5_folds() -> dict[int, str]:
    """Each code point FTS5 reads as something other than its lowercase, and what it reads: each is
    tokenized between two ``a``s, so a dropped mark shows as ``aa`` and a separator as two words."""
    conn = driver.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", [(cp, f"a{chr(cp)}a") for cp in _CODE_POINTS])
        words: dict[int, list[str]] = {}
        for cp, word in conn.execute("SELECT doc, term FROM v"):
            words.setdefault(cp, []).append(word)
    finally:
        conn.close()
    return {cp: found[0][1:-1] for cp, found in words.items()
            if len(found) == 1 and found[0][1:-1] not in (chr(cp), chr(cp).lower())}


def test_fold_is_fts5s_unicode61_fold_on_every_code_point() -> None:
    ours = {cp: text.fold(chr(cp)).lower() for cp in _CODE_POINTS if text.fold(chr(cp)) != chr(cp)}
    assert ours == fts5_folds()


def test_fold_keeps_what_fts5_keeps() -> None:
    assert text.fold("Café José naïve Ærø Straße Łódź Việt") == "Cafe Jose naive Ærø Straße Łodz Việt"
    assert text.fold(unicodedata.normalize("NFD", "café")) == "cafe"
    assert text.search_words("CAFÉ au lait") == ["cafe", "au", "lait"]
