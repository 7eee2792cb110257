"""docs/coming-from.md names every foreign setting config.py maps, so the page cannot fall behind."""

from __future__ import annotations

from pathlib import Path

from engram.config import FOREIGN_CLAWLESS, FOREIGN_MEMORY_BLOCK

PAGE = Path(__file__).resolve().parents[2] / "docs" / "coming-from.md"


def test_every_mapped_name_is_on_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    names = [*FOREIGN_CLAWLESS, *(source[-1] for source in FOREIGN_MEMORY_BLOCK)]
    missing = [name for name in names if f"`{name}`" not in text and f"{name}`" not in text]
    assert missing == []
    for system in ("PtrClaw", "sclaw", "ClawCode", "PHP entity", "Clawless"):
        assert f"## {system}" in text or f"## The {system}" in text
