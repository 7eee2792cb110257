"""Memory for the system prompt: sclaw's ``InjectMemory`` and the PHP entity's ``toPromptContext``.

``inject_memory`` takes relevant facts in rank order and adds them while they fit ``max_tokens``
(the first fact that does not fit ends the list: rank order is never reshuffled to pack more),
rendered as a ``## Relevant Memory`` section. ``to_prompt_context`` renders memories the PHP way,
``- [type] content (age)``. Both give an empty string when nothing is relevant.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

from engram.engine import Engram
from engram.model import MAX_RECALL_LIMIT, Category, Memory, parse_integer
from engram.text import query_terms

TokenEstimator = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """PtrClaw's fallback heuristic: words x 1.3, rounded up."""
    words = len(text.split())
    return -(-words * 13 // 10)


def humanize_age(seconds: float) -> str:
    """Carbon's ``diffForHumans``: ``just now``, ``1 minute ago``, ``3 days ago``; a negative age (a
    time after now, as an import can bring from a source's clock) reads ``2 days from now``, as
    Carbon says it, not ``just now``."""
    ahead, seconds = seconds < 0, abs(seconds)
    for unit, size in (("year", 31_536_000), ("month", 2_592_000), ("week", 604_800), ("day", 86_400),
                       ("hour", 3_600), ("minute", 60), ("second", 1)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} {'from now' if ahead else 'ago'}"
    return "just now"


def render_relevant_memory(facts: Sequence[str]) -> str:
    if not facts:
        return ""
    return "## Relevant Memory\n\n" + "\n".join(f"- {fact}" for fact in facts)


def _prompt_context_lines(memories: Sequence[Memory], now: float | None) -> list[str]:
    now = time.time() if now is None else now
    return [f"- [{m.type}] {m.content} ({humanize_age(now - m.created_at)})" for m in memories]


def render_prompt_context(memories: Sequence[Memory], *, now: float | None = None) -> str:
    """PHP ``toPromptContext``: one ``- [type] content (age)`` line per memory."""
    return "\n".join(_prompt_context_lines(memories, now))


def _fitting(lines: Sequence[str], max_tokens: int, estimator: TokenEstimator, used: int = 0) -> int:
    """How many of ``lines``, first to last, fit ``max_tokens`` after ``used`` tokens: the first
    that does not fit ends the count (rank order is never reshuffled to pack more)."""
    fitted = 0
    for line in lines:
        used += estimator(line)
        if used > max_tokens:
            break
        fitted += 1
    return fitted


def select_within_budget(contents: Sequence[str], max_tokens: int, estimator: TokenEstimator = estimate_tokens) -> list[str]:
    """The longest prefix of ``contents`` whose rendered lines fit ``max_tokens``."""
    fitted = _fitting([f"- {content}" for content in contents], max_tokens, estimator, estimator("## Relevant Memory"))
    return list(contents[:fitted])


def inject_memory(
    engram: Engram | None,
    query: str,
    *,
    max_facts: int = 10,
    max_tokens: int = 2000,
    estimator: TokenEstimator = estimate_tokens,
    style: Literal["relevant_memory", "prompt_context"] = "relevant_memory",
    now: float | None = None,
) -> str:
    """The memory section for a system prompt, or ``""`` when memory is off or nothing is relevant.
    Core entries are left out (the soul block carries them). ``max_facts`` or ``max_tokens`` of 0
    or less asks for nothing, as sclaw's ``MaxFacts``/``MaxTokens``: ``""``. Raises
    ``ValidationError`` (naming ``max_facts`` past recall's limit, or either when not an integer)
    and ``StorageError``."""
    lowest = -(2**63)  # any amount of nothing: only the type and the upper bound are checked
    max_facts = parse_integer(max_facts, "max_facts", lowest, MAX_RECALL_LIMIT,
                              allowed=f"an integer up to {MAX_RECALL_LIMIT} (0 or less: nothing injected)")
    max_tokens = parse_integer(max_tokens, "max_tokens", lowest, allowed="an integer (0 or less: nothing injected)")
    if engram is None or max_facts <= 0 or max_tokens <= 0 or not query_terms(query):
        return ""
    hits = [m for m in engram.recall(query, limit=max_facts).memories if m.category is not Category.CORE]
    if style == "prompt_context":
        # Budgeted as rendered: the type and age make each line longer than its content.
        lines = _prompt_context_lines(hits, now)
        return "\n".join(lines[: _fitting(lines, max_tokens, estimator)])
    return render_relevant_memory(select_within_budget([m.content for m in hits], max_tokens, estimator))


def to_prompt_context(engram: Engram, limit: int = 5, *, now: float | None = None) -> str:
    """The PHP method itself: the ``limit`` most important memories, rendered with their age."""
    return render_prompt_context(engram.most_important(limit), now=now)
