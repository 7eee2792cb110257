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


def test_a_text_with_nothing_to_fold_costs_about_what_lower_does(pg_url: str) -> None:
    """Schema step 0018: a text folding leaves as it is (a script without case, here Japanese) is
    not read through 0017's table, which cost some 500 times lower()'s time per row, on every row
    an icontains filter reads. Times compared in one session, so a busy machine slows both."""
    import time

    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TEMP TABLE texts (v text)")
        conn.execute("INSERT INTO texts SELECT repeat('記憶の検索と保存について話し合いました。', 10) || g"
                     " FROM generate_series(1, 5000) g")

        def seconds(fold: str) -> float:
            start = time.perf_counter()
            conn.execute(f"SELECT count(*) FROM texts WHERE strpos({fold}, 'x') > 0").fetchone()
            return time.perf_counter() - start

        seconds("engram_casefold(v)")  # (the plan and the regular expression compiled once)
        assert seconds("engram_casefold(v)") < 20 * seconds('lower(v COLLATE "C")') + 0.05
        assert conn.execute("SELECT engram_casefold('記憶 ÉCOLE')").fetchone()[0] == fold_case("記憶 ÉCOLE")
