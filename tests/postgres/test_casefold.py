"""Schema step 0017: ``icontains`` folds case on PostgreSQL as ``engram.where.fold_case``
(Python's ``str.casefold``) does, whatever the server's collation or C library."""

from __future__ import annotations

import psycopg

from engram.where import fold_case


def test_engram_casefold_is_fold_case_on_every_code_point(pg_url: str) -> None:
    # Every cased letter is below U+20000 (Deseret, Osage, Adlam... included); NUL is no text.
    chars = [chr(cp) for cp in range(1, 0x20000) if not 0xD800 <= cp < 0xE000]
    with psycopg.connect(pg_url) as conn:
        folded = conn.execute("SELECT array_agg(engram_casefold(c) ORDER BY n) FROM unnest(%s::text[])"
                              " WITH ORDINALITY u(c, n)", [chars]).fetchone()[0]
    assert {c: f for c, f in zip(chars, folded, strict=True) if f != c} == {
        c: fold_case(c) for c in chars if fold_case(c) != c}
    with psycopg.connect(pg_url) as conn:
        for text in ("Straße ÉCOLE Ǆ ΣΊΣΥΦΟΣ ﬁne İ", "PLAIN ascii Text", "mixed ẞ and ABC"):
            assert conn.execute("SELECT engram_casefold(%s)", [text]).fetchone()[0] == fold_case(text), text
