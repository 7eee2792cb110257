"""Structured output: ask for JSON, validate it with pydantic, repair once.

Models wrap JSON in code fences or prose, or get a field wrong. ``complete_json`` extracts the
first JSON value from the reply, validates it against a pydantic type, and when that fails asks
the model once to correct its reply, quoting the validation error. A second failure raises
``ProviderError`` naming what was wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from engram.errors import ProviderError
from engram.llm.base import ChatProvider, Usage, assistant_message, user_message
from engram.model import Message

T = TypeVar("T")

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON value in ``text`` (inside a code fence or bare); raises ``ValueError``."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        for start, char in enumerate(stripped):
            if char in "[{":
                try:
                    value, _ = decoder.raw_decode(stripped[start:])
                except json.JSONDecodeError:
                    continue
                return value
    raise ValueError("no JSON object or array in the reply")


def complete_json(
    provider: ChatProvider,
    messages: Sequence[Message],
    schema: type[T] | Any,
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    usage_sink: list[Usage] | None = None,
) -> T:
    """Ask ``provider`` for JSON matching ``schema`` (a pydantic model or any type pydantic can
    validate, e.g. ``list[Note]``). Raises ``ProviderError`` when the reply stays invalid after one
    repair attempt, or when the provider itself fails."""
    adapter: TypeAdapter[Any] = TypeAdapter(schema)
    conversation = list(messages)
    problem = ""
    for attempt in range(2):
        response = provider.chat(conversation, temperature=temperature, max_tokens=max_tokens, json_mode=True)
        if usage_sink is not None:
            usage_sink.append(response.usage)
        try:
            return adapter.validate_python(extract_json(response.text))
        except (ValueError, PydanticValidationError) as exc:
            problem = _describe(exc)
        if attempt == 0:
            conversation += [
                assistant_message(response.text),
                user_message(
                    f"That reply could not be used: {problem}. Reply again with only the corrected JSON, "
                    f"matching this JSON Schema: {json.dumps(adapter.json_schema())}"
                ),
            ]
    raise ProviderError(f"{provider.name}: the model's JSON was still invalid after a repair attempt: {problem}")


def _describe(exc: Exception) -> str:
    if isinstance(exc, PydanticValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in exc.errors()[:5]
        )
    return str(exc)
