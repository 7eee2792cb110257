"""Time-ordered identifiers (UUIDv7, RFC 9562) and key generation.

UUIDv7 sorts by creation time, so ids double as a stable insertion order across backends.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import unicodedata
import uuid
from collections.abc import Iterator

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def new_id() -> str:
    """Return a new UUIDv7 string; monotonic within this process."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            # Same millisecond (or a clock step back): keep order with a 12-bit counter.
            _counter += 1
            if _counter > 0xFFF:
                _last_ms += 1
                _counter = 0
            ms = _last_ms
        else:
            _last_ms = ms
            _counter = int.from_bytes(os.urandom(2), "big") & 0x3FF
        rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
        value = (ms & ((1 << 48) - 1)) << 80
        value |= 0x7 << 76
        value |= (_counter & 0xFFF) << 64
        value |= 0b10 << 62
        value |= rand_b
    return str(uuid.UUID(int=value))


# A word (letters and digits, not the underscore): keys are text, not file names.
_WORD = re.compile(r"[^\W_]+")
_KEY_STOPWORDS = frozenset(
    "a an the of to for and or in on at by with is are was were be been that this it its".split()
)


def _words(text: str) -> Iterator[str]:
    """``text``'s words in order. Beyond ASCII a word keeps its combining marks: Python's ``\\w``
    does not take them, which split Hindi, Arabic or Hebrew words at every vowel sign
    (``नमस्ते`` is one word, not ``नमस-त``)."""
    if text.isascii():
        yield from (match.group() for match in _WORD.finditer(text))
        return
    word: list[str] = []
    for char in text:
        if char.isalnum() or (word and unicodedata.category(char)[0] == "M"):
            word.append(char)
        elif word:
            yield "".join(word)
            word = []
    if word:
        yield "".join(word)


def _plain_latin(word: str) -> str:
    """``word`` with the marks on Latin letters taken off (``pastéis`` -> ``pasteis``, the dot of
    ``i̇`` that casefolding ``İ`` leaves -> ``i``), so a key keeps the word rather than a spelling
    readers type rarely; other scripts' marks stay, as they change the word (``で`` is not ``て``)."""
    if word.isascii():
        return word
    kept: list[str] = []
    for char in unicodedata.normalize("NFD", word):
        if not (kept and kept[-1].isascii() and unicodedata.category(char)[0] == "M"):
            kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def key_from_content(content: str, max_words: int = 6) -> str:
    """A readable key made from the content's first significant words, e.g. ``user-prefers-python``
    (``müller-mag-käse`` gives ``muller-mag-kase``; a word of any script is kept as it is).

    Callers make it unique within the scope (see ``engine``); this only proposes.
    """
    # Words are read only as far as the key needs: this runs on every write, on content up to
    # max_content_chars long.
    significant: list[str] = []
    first: list[str] = []
    for word in _words(unicodedata.normalize("NFC", content).casefold()):
        if len(first) < max_words:
            first.append(word)
        if word not in _KEY_STOPWORDS:
            significant.append(word)
            if len(significant) == max_words:
                break
    slug = "-".join(_plain_latin(word) for word in significant or first)[:60].strip("-")
    return slug or "memory"


def derived_id(parts: tuple[str, ...], created_at: float | None) -> str:
    """A UUIDv7-shaped id fixed by ``parts`` (what identifies the record: its source, the agent it
    is imported into, its id there): the same parts always give the same id, so a second import
    finds it, ordered by ``created_at`` when known."""
    digest = int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:10], "big")
    ms = int((created_at or 0) * 1000) & ((1 << 48) - 1)
    value = ms << 80 | 0x7 << 76 | (digest >> 68 & 0xFFF) << 64 | 0b10 << 62 | (digest & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))
