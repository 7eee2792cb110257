"""The two spellings of a Clawless ``conversation-history.jsonl`` exchange, read in one place.

Clawless's code writes each exchange as ``{"timestamp", "chat_id", "user_message", "bot_response",
"platform"}`` (snake_case); its documentation, older files and engram's own ``jsonl`` history
backend spell the same fields ``{"userMessage", "botResponse", "chatId", "platform",
"timestamp"}`` (camelCase). The importer (``importers/clawless``) and the history backend
(``history/jsonl``) both read a line through ``field``, and the backend writes a line in the
spelling its file already uses (``SNAKE`` names the fields that differ).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Each field whose spelling differs: camelCase (engram's and Clawless's documentation) to snake_case
# (Clawless's code). ``platform`` and ``timestamp`` are spelt alike.
SNAKE = {"userMessage": "user_message", "botResponse": "bot_response", "chatId": "chat_id"}


def field(item: Mapping[str, Any], name: str) -> tuple[Any, str]:
    """The value of the exchange's field ``name`` (camelCase) in either spelling, and the name
    the item gives it (for an error to name); ``None`` when the item has neither."""
    other = SNAKE.get(name, name)
    return (item[other], other) if name not in item and other in item else (item.get(name), name)


def is_exchange(value: object) -> bool:
    """Whether ``value`` is one exchange, in either spelling (a user message and its answer)."""
    return isinstance(value, Mapping) and any(
        user in value and bot in value for user, bot in (("userMessage", "botResponse"), ("user_message", "bot_response")))


def is_snake_case(item: Mapping[str, Any]) -> bool:
    """Whether the exchange is spelt as Clawless's code writes it (``user_message``, ...)."""
    return any(snake in item for snake in SNAKE.values()) and not any(camel in item for camel in SNAKE)
