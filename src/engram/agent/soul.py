"""Identity (PtrClaw's soul): the block injected into every system prompt, and hatching.

The soul is three core entries - ``soul:identity``, ``soul:user``, ``soul:philosophy`` - plus up to
five ``personality:*`` core entries, newest first. Hatching is a conversation under the hatch
prompt that ends with the model writing ``<soul>{…}</soul>``; ``parse_soul`` reads that block
tolerantly (code fences, prose around it, nested values) and raises a clear ``ValidationError``
when it cannot, in which case nothing is stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from engram.agent import prompts
from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.llm.structured import extract_json
from engram.model import Category, Memory

SOUL_KEYS = ("soul:identity", "soul:user", "soul:philosophy")
_HEADINGS = {"soul:identity": "## Your Identity", "soul:user": "## About your human", "soul:philosophy": "## Your philosophy"}
MAX_TRAITS = 5

_SHAPE = '<soul>{"identity": "...", "user": "...", "philosophy": "..."}</soul>'
_SOUL_BLOCK = re.compile(r"<soul>(.*?)</soul>", re.DOTALL | re.IGNORECASE)


def _core(engram: Engram) -> list[Memory]:
    out: list[Memory] = []
    while True:
        page = engram.list(Filters(category=Category.CORE), order="recent", limit=500, offset=len(out))
        out.extend(page)
        if len(page) < 500:
            return out


def build_soul_block(engram: Engram | None) -> str:
    """The identity sections for the system prompt; empty when no soul entries exist."""
    if engram is None:
        return ""
    core = _core(engram)
    # Per key, the entry of the most specific scope this view reads (session, agent, global), as
    # a key resolves everywhere: a global entry - which any agent may write - never replaces an
    # agent's own identity, however recently it was written.
    rank = {scope: n for n, scope in enumerate(engram.scope.visible())}
    by_key: dict[str, Memory] = {}
    for memory in core:  # newest first: within one scope the newest wins
        held = by_key.get(memory.key)
        if held is None or rank[memory.scope] < rank[held.scope]:
            by_key[memory.key] = memory
    sections = [f"{_HEADINGS[key]}\n{by_key[key].content}" for key in SOUL_KEYS if key in by_key]
    traits = sorted((m for m in core if m.key.startswith("personality:")), key=lambda m: m.updated_at, reverse=True)
    if traits:
        sections.append("## Learned traits\n" + "\n".join(f"- {m.content}" for m in traits[:MAX_TRAITS]))
    return "\n\n".join(sections)


def build_hatch_prompt() -> str:
    return prompts.load("hatch")


@dataclass(frozen=True, slots=True)
class Soul:
    identity: str
    user: str
    philosophy: str

    def entries(self) -> dict[str, str]:
        return dict(zip(SOUL_KEYS, (self.identity, self.user, self.philosophy), strict=True))


def has_soul_block(text: str) -> bool:
    return "<soul>" in text.lower()


def parse_soul(text: str) -> Soul:
    """The soul from a model reply holding ``<soul>{json}</soul>``. Raises ``ValidationError``
    (field ``soul``) when the block is missing, is not JSON, or lacks one of the three parts."""
    match = _SOUL_BLOCK.search(text)
    if match is None:
        raise ValidationError("soul", "the reply has no <soul>…</soul> block", _SHAPE)
    try:
        data = extract_json(match.group(1))
    except ValueError:
        raise ValidationError("soul", "the <soul> block is not valid JSON", _SHAPE) from None
    if not isinstance(data, dict):
        raise ValidationError("soul", f"the <soul> block holds a {type(data).__name__}", "a JSON object")
    values: dict[str, str] = {}
    for part in ("identity", "user", "philosophy"):
        raw = data.get(part, data.get(f"soul:{part}"))
        text_value = _as_text(raw)
        if not text_value:
            raise ValidationError("soul", f"the <soul> block has no {part!r}", "identity, user and philosophy, each non-empty")
        values[part] = text_value
    return Soul(**values)


def _as_text(value: Any) -> str:
    """Models sometimes nest details ({"name": …, "personality": …}); flatten them to lines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_as_text(v)}" for k, v in value.items() if _as_text(v))
    if isinstance(value, list):
        return "\n".join(_as_text(v) for v in value if _as_text(v))
    return json.dumps(value)


def store_soul(engram: Engram, soul: Soul) -> list[Memory]:
    """Store (upsert) the three soul entries as core memories; validated before anything is written."""
    for key, content in soul.entries().items():
        if len(content) > engram.max_content_chars:
            raise ValidationError("soul", f"{key} is longer than {engram.max_content_chars} characters")
    return [
        engram.remember(content, key=key, category=Category.CORE, type="social" if key == "soul:user" else "learned",
                        importance=1.0, source="hatching").memory
        for key, content in soul.entries().items()
    ]
