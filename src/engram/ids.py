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


# A word of any script (letters and digits, not the underscore): keys are text, not file names.
_WORD = re.compile(r"[^\W_]+")
_KEY_STOPWORDS = frozenset(
    "a an the of to for and or in on at by with is are was were be been that this it its".split()
)

_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


def _plain_latin(text: str) -> str:
    """``text`` with the accents of Latin letters taken off (``pastéis`` -> ``pasteis``), so a key
    keeps the word rather than splitting it at the accent; other scripts' marks are left alone,
    as in Japanese they change the sound (``で`` is not ``て``)."""
    return text if text.isascii() else _NOT_ASCII.sub(_bare_latin, text)  # (on every write: ASCII costs nothing)


def _bare_latin(match: re.Match[str]) -> str:
    char = match.group()
    bare = unicodedata.normalize("NFD", char)
    return bare[0] if bare[0].isascii() and all(unicodedata.combining(c) for c in bare[1:]) else char


def key_from_content(content: str, max_words: int = 6) -> str:
    """A readable key made from the content's first significant words, e.g. ``user-prefers-python``
    (``müller-mag-käse`` gives ``muller-mag-kase``; a word of any script is kept as it is).

    Callers make it unique within the scope (see ``engine``); this only proposes.
    """
    # Words are read only as far as the key needs: this runs on every write, on content up to
    # max_content_chars long.
    significant: list[str] = []
    first: list[str] = []
    for match in _WORD.finditer(unicodedata.normalize("NFC", content).casefold()):
        word = match.group()
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
