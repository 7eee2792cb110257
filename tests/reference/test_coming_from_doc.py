"""docs/coming-from/ names every foreign setting engram maps (foreign_settings.py), so the pages cannot fall behind."""

from __future__ import annotations

from pathlib import Path

from engram.foreign_settings import (
    FOREIGN_CLAWLESS,
    FOREIGN_ENV,
    FOREIGN_MEMORY_BLOCK,
    FOREIGN_PTRCLAW_AGENT,
    FOREIGN_SCLAW_SQLITE,
)

PAGES = Path(__file__).resolve().parents[2] / "docs" / "coming-from"


def test_every_mapped_name_is_on_the_page() -> None:
    text = "\n".join(PAGES.joinpath(f"{name}.md").read_text(encoding="utf-8")
                      for name in ("ptrclaw", "sclaw", "clawcode", "php-entity", "clawless"))
    names = [*FOREIGN_CLAWLESS, *FOREIGN_ENV, *FOREIGN_SCLAW_SQLITE,
             *(".".join(source) for source in FOREIGN_MEMORY_BLOCK if len(source) > 1),
             *(source[-1] for source in FOREIGN_MEMORY_BLOCK),
             *("agent." + ".".join(source) for source in FOREIGN_PTRCLAW_AGENT)]
    missing = [name for name in names if f"`{name}`" not in text and f"{name}`" not in text]
    assert missing == []
    for system in ("PtrClaw", "sclaw", "ClawCode", "PHP entity", "Clawless"):
        assert f"# Coming from {system}" in text or f"# Coming from the {system}" in text
