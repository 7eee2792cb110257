"""Exchanges and recap blocks (Clawless): what a prompt gets when it asks for earlier context.

An exchange is a user message and the assistant's final answer to it (tool traffic in between
is left out). A recap lists exchanges oldest first and never exceeds its character budget: the
most recent exchanges that fit are kept (``format_recap``), or, for exchanges recalled by meaning,
the closest to the question (``format_ranked_recap``); the first one alone too long is shortened.
Each exchange is dated in UTC, marked as such: semantic recall answers the same exchanges with ISO
8601 UTC ``timestamp`` fields beside the recap, and a recap dated in the server's local zone
contradicted them (and changed with the machine that wrote it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from engram.model import Exchange, Message, Role
from engram.text import strip_memory_context

RECAP_OPEN = "[Conversation recap]"
RECAP_CLOSE = "[/Conversation recap]"


def pair_exchanges(conversation: str, messages: Sequence[Message]) -> list[Exchange]:
    """The completed exchanges in ``messages``: each user message with the last assistant text
    that answered it before the next user message. A user message with no answer is left out; a
    ``[Memory context]`` block an agent prepended to one is not part of the exchange."""
    out: list[Exchange] = []
    user: Message | None = None
    answer = ""
    for message in [*messages, None]:
        if message is None or message.role is Role.USER:
            if user is not None and answer:
                # The user's words: a [Memory context] block an agent prepended is not embedded nor recapped.
                out.append(Exchange(conversation, strip_memory_context(user.content), answer, user.created_at))
            user, answer = message, ""
        elif message.role is Role.ASSISTANT and message.content.strip() and user is not None:
            answer = message.content
    return out


def _entry(exchange: Exchange, limit: int | None = None) -> str:
    when = dt.datetime.fromtimestamp(exchange.at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if exchange.at else "-"
    user, answer = " ".join(exchange.user.split()), " ".join(exchange.assistant.split())
    text = f"- [{when}] User: {user}\n  Assistant: {answer}"
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return text


def format_recap(exchanges: Sequence[Exchange], max_chars: int) -> str:
    """A recap block of the newest exchanges that fit in ``max_chars``, oldest first; "" if none."""
    return _recap(exchanges, reversed(range(len(exchanges))), max_chars)


def format_ranked_recap(hits: Sequence[tuple[Exchange, float]], max_chars: int) -> str:
    """A recap block of recalled exchanges (oldest first, each with its score): those that fit in
    ``max_chars``, the closest taken first, shown in their order; "" if none. Filled from the newest,
    an older exchange the question was about was left out for newer ones that were not."""
    closest = sorted(range(len(hits)), key=lambda i: -hits[i][1])  # stable: a tie takes the older first
    return _recap([exchange for exchange, _ in hits], closest, max_chars)


def _recap(exchanges: Sequence[Exchange], preferred: Iterable[int], max_chars: int) -> str:
    """The recap of ``exchanges`` taken in the order of the positions ``preferred`` while they fit,
    shown in their own order."""
    frame = len(RECAP_OPEN) + len(RECAP_CLOSE) + 2
    budget = max_chars - frame
    if not exchanges or budget <= 0:
        return ""
    chosen: dict[int, str] = {}
    for position in preferred:
        entry = _entry(exchanges[position])
        cost = len(entry) + 1
        if cost > budget:
            if not chosen:  # the first exchange alone is too long: shorten it rather than show nothing
                chosen[position] = _entry(exchanges[position], budget - 1)
            break
        chosen[position] = entry
        budget -= cost
    return "\n".join([RECAP_OPEN, *(chosen[position] for position in sorted(chosen)), RECAP_CLOSE])
