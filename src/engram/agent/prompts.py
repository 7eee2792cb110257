"""The agent's prompt texts, kept as markdown files in ``prompts/`` so they can be read and edited
without touching code. ``render`` fills ``{name}`` placeholders."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load(name: str) -> str:
    """The text of ``prompts/<name>.md``."""
    return resources.files("engram.agent").joinpath("prompts", f"{name}.md").read_text(encoding="utf-8").strip()


def render(name: str, **values: str) -> str:
    text = load(name)
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text
