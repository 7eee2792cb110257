"""Token estimation (PtrClaw): provider-reported counts first, tiktoken when installed, words x 1.3.

tiktoken is optional (``pip install 'engram-recall[tokens]'``); its encodings are files it may have to
download on first use, which fails offline, so any failure to load one falls back to the word
heuristic instead of breaking compaction. Estimates need to be good enough to decide when to
compact, not exact.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable
from typing import Any

from engram.model import Message

log = logging.getLogger("engram.tokens")

WORDS_TO_TOKENS = 1.3
# Per-message framing that chat formats add (role markers, separators).
MESSAGE_OVERHEAD = 4


@functools.lru_cache(maxsize=4)
def _encoding(name: str) -> Any | None:
    try:
        import tiktoken  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # noqa: BLE001 - a missing or undownloadable encoding file: use words
        log.info("tiktoken encoding %s unavailable (%s); estimating tokens from words", name, exc)
        return None


def count_text(text: str, *, encoding: str = "cl100k_base") -> int:
    """Tokens in ``text``: tiktoken's count when available, else words x 1.3 (rounded up)."""
    enc = _encoding(encoding)
    if enc is not None:
        return len(enc.encode(text, disallowed_special=()))
    return math.ceil(len(text.split()) * WORDS_TO_TOKENS)


def estimate_messages(
    messages: Iterable[Message], *, reported: int | None = None, encoding: str = "cl100k_base"
) -> int:
    """Tokens a list of messages costs; ``reported`` (the provider's ``prompt_tokens``) wins when given."""
    if reported is not None and reported >= 0:
        return int(reported)
    total = 0
    for message in messages:
        total += MESSAGE_OVERHEAD + count_text(message.content, encoding=encoding)
        for call in message.tool_calls:
            total += count_text(f"{call.name} {call.arguments}", encoding=encoding)
    return total


def method() -> str:
    """Which estimator ``count_text`` uses here: ``tiktoken`` or ``words``."""
    return "tiktoken" if _encoding("cl100k_base") is not None else "words"
