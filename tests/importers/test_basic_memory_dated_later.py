"""A basic-memory note imported without ``created`` in its front matter (dated by its file, its id
holding no time) that is given one afterwards is the same note: importing the vault again stored
it and its observations a second time, as the id then held the time. A note written at the same
path later (created after the file the first import dated the old one by) is a new note, and its
observations follow it, even one with the old note's words. Real files on disk, ``engram import``
in-process against a real SQLite home."""

from __future__ import annotations

import os
from pathlib import Path

from .cli_runs import as_json

WRITTEN = 1735725600.0  # 2025-01-01 10:00 UTC: the file's time, which dates a note without dates
TEA = "---\ntitle: Tea\npermalink: tea\n{created}---\n# Tea\n\n{prose}\n\n- [preference] green tea in the morning #drinks\n{more}"


def write(vault: Path, prose: str = "Sam likes tea.", created: str | None = None, more: str = "",
          at: float = WRITTEN) -> None:
    path = vault / "tea.md"
    path.write_text(TEA.format(created=f"created: {created}\n" if created else "", prose=prose, more=more),
                    encoding="utf-8")
    os.utime(path, (at, at))


def imported(home: Path, vault: Path) -> tuple[int, int]:
    summary = as_json(home, "import", str(vault), "--from", "basic-memory")
    return summary["imported"], summary["skipped"]


def memories(home: Path) -> list[dict]:
    return as_json(home, "list", "--limit", "50")


def test_a_note_given_a_created_date_after_a_dateless_import_is_the_same_note(tmp_path: Path) -> None:
    vault, home = tmp_path / "vault", tmp_path / "home"
    vault.mkdir()
    (vault / "coffee.md").write_text("---\ntitle: Coffee\npermalink: coffee\n---\n# Coffee\n\nNo coffee after noon.\n",
                                     encoding="utf-8")
    write(vault)
    assert imported(home, vault) == (3, 0)
    held = {m["key"]: m["id"] for m in memories(home)}
    # The user dates the note (to a day before its file's time), and notes one more thing in it.
    write(vault, created="2024-12-30T08:00:00Z", more="- [fact] sencha in the afternoon\n", at=WRITTEN + 3600)
    assert imported(home, vault) == (1, 3)  # the new observation only: no second note, no second observation
    after = memories(home)
    assert len(after) == 4 and {m["key"]: m["id"] for m in after if m["key"] in held} == held
    sencha = next(m for m in after if m["content"] == "sencha in the afternoon")
    assert held["tea"] in as_json(home, "get", sencha["id"])["links"]  # linked to the note the first import stored
    assert imported(home, vault) == (0, 4)  # and a third import is a no-op


def test_a_new_note_at_the_path_of_a_dateless_one_is_a_new_note_its_observations_with_it(tmp_path: Path) -> None:
    vault, home = tmp_path / "vault", tmp_path / "home"
    vault.mkdir()
    write(vault)
    assert imported(home, vault) == (2, 0)
    # The old note deleted, another written at its path months later, dated then; one of its
    # observations has the old one's words.
    write(vault, prose="A new note about tea.", created="2025-06-01T09:00:00Z", at=WRITTEN + 200 * 86400)
    assert imported(home, vault) == (2, 0)
    notes = {m["content"]: m for m in memories(home)}
    assert set(notes) == {"Sam likes tea.", "A new note about tea.", "green tea in the morning"}
    observations = [m for m in memories(home) if m["content"] == "green tea in the morning"]
    assert len(observations) == 2
    new_note = notes["A new note about tea."]["id"]
    assert sum(new_note in as_json(home, "get", m["id"])["links"] for m in observations) == 1


def test_a_dated_note_given_another_date_is_a_new_note(tmp_path: Path) -> None:
    """(As before: the time in a dated note's id keeps two notes at one path apart.)"""
    vault, home = tmp_path / "vault", tmp_path / "home"
    vault.mkdir()
    write(vault, created="2024-12-30T08:00:00Z")
    assert imported(home, vault) == (2, 0)
    write(vault, created="2024-06-01T08:00:00Z")
    assert imported(home, vault) == (2, 0)
    assert len(memories(home)) == 4
