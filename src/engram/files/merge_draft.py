"""The text a conflict's merge is written from in an editor (``engram conflicts resolve ID --take
merge --edit``), and the merge read back from it.

The draft is git's ``commit --cleanup=scissors`` layout: the database version on top, to be edited
into the merge; then a scissors line; below it, a few guidance lines and the file's version as it
was kept, to copy from. Reading the draft back cuts it at the scissors line and keeps every line
above it byte for byte. Dropping every line starting with ``#`` (git's default cleanup, and what
this did before) lost a side's own ``#`` lines, as a markdown heading (``# Plan``), from the merged
memory; showing the file's version below the cut, unprefixed, also lets its lines be copied up as
they are. A scissors line a side's own text holds is made longer until it is the draft's alone, so
no memory's text is ever cut. A draft whose scissors line the user removed is taken whole, as git
takes it: nothing was marked as not the memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engram.model import Memory

    from .conflicts import Conflict

SCISSORS = "# ------------------------ >8 ------------------------"  # git's, as a git user knows it


@dataclass(frozen=True, slots=True)
class MergeDraft:
    """A merge to write in an editor: ``text`` to open it on, cut at ``scissors`` when read back."""

    text: str
    scissors: str  # ``SCISSORS``, made longer when a side's text holds that line

    def merged(self, edited: str) -> str:
        """The merge as written in ``edited`` (the draft after editing): every line above the first
        scissors line, as written (``#`` lines and line endings too), without the line breaks at its
        start and end (the draft's blank line before the cut, an editor's final newline). The whole
        text when the scissors line is gone. Empty text is returned as it is: the merge refuses it."""
        lines = edited.split("\n")
        for n, line in enumerate(lines):
            if line.rstrip("\r") == self.scissors:  # an editor saving with CRLF line endings still cuts
                lines = lines[:n]
                break
        return "\n".join(lines).strip("\r\n")


def merge_draft(memory: Memory | None, conflict: Conflict) -> MergeDraft:
    """The draft of ``conflict``'s merge against ``memory``, its database side (None: forgotten,
    so nothing is on top): module doc."""
    top = memory.content if memory is not None else ""
    kept = [entry.content for entry in conflict.entries]
    held = {line.rstrip("\r") for text in (top, *kept) for line in text.split("\n")}
    scissors = SCISSORS
    while scissors in held:
        scissors += " >8"
    if kept:
        below = "# The file's version (copy what you keep above the line):\n" + "\n\n".join(kept)
    elif conflict.unreadable:
        below = "# The file's version cannot be read: " + "; ".join(conflict.unreadable).replace("\n", " ")
    else:
        below = "# The file's version: the file had deleted this entry."
    guidance = ("# Do not modify or remove the line above.\n"
                "# Everything below it is ignored; the text above it, # lines too, becomes the memory.\n")
    return MergeDraft(f"{top}\n\n{scissors}\n{guidance}{below}\n", scissors)
