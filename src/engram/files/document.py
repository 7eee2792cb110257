"""What the two file formats have in common: a parsed file (``Document``) that can be patched one
entry at a time, so a change to one memory rewrites only that entry's text and keeps everything
else in the file (hand formatting, invalid entries waiting to be fixed, unsynced edits) as it was.

That includes its line endings (``line_ending``): a document's ``text`` is the file's bytes to be,
so a file its owner keeps with CRLF (saved on Windows, or converted) is rewritten and appended to
with CRLF, and the sync state, which hashes and measures that text, follows what is on disk. Parsing
reads either ending; what reaches a memory's content is a line feed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from .entry import Entry, Problem


@dataclass
class Parsed:
    """A file's valid entries, its problems, and ids of entries that are present but invalid
    (those must never be taken as deleted)."""

    entries: list[Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    invalid_ids: set[str] = field(default_factory=set)
    # True when the file as a whole could not be read: it is left untouched until fixed.
    broken: bool = False


def line_ending(text: str) -> str:
    """The line ending a file's ``text`` is written with: ``"\\r\\n"`` when its first line ends so,
    else ``"\\n"`` (what engram writes in a file it creates). One per file: a file with both is
    written with the one its first line has."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def utf8_size(text: str) -> int:
    """``text``'s size in bytes once written (UTF-8): the one rule for a file's size. Counted
    without encoding a copy when the text is ASCII, as most memory files are (at 10,000 entries
    each copy was 1 ms)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class Document(Protocol):
    parsed: Parsed
    # The line ending ``text`` writes (``line_ending`` of the text parsed; "\n" for a new file).
    newline: str

    def replace(self, entry_id: str, entry: Entry) -> bool:
        """Put ``entry`` where the entry with ``entry_id`` is; False when there is none."""
        ...

    def set_at(self, line: int, entry: Entry | None) -> bool:
        """Replace (or, with None, remove) the entry parsed at ``line`` (entries without an id)."""
        ...

    def remove(self, entry_id: str) -> bool: ...

    def add(self, entry: Entry) -> None: ...

    def remove_all(self, entry_ids: Iterable[str]) -> None:
        """As ``remove`` of each id in turn (an id given twice removes its first two entries), in
        one walk over the file: removing thousands one by one walked it once each."""
        ...

    def copy(self) -> Document:
        """An independent copy, to try a change on (entries shared, not copied: none is changed in place)."""
        ...

    def text(self) -> str:
        """The file's text as it is to be written, in its own line endings (``newline``)."""
        ...

    def size(self) -> int:
        """``utf8_size`` of ``text``, kept up to date as entries are added at the end, so asking
        after each of thousands of adds does not join the whole text each time."""
        ...


class Format(Protocol):
    name: str
    suffix: str  # what a file it writes is named with
    # What a file it reads may be named with: ``suffix`` and its other usual spellings (YAML's
    # ``.yml``), as ``engram import`` of a memory folder reads them; a hand-made ``notes.yml`` was
    # reported by sync as "not in that format" and its entries never read.
    suffixes: tuple[str, ...]

    def parse(self, text: str, path: str, *, max_content_chars: int) -> Document: ...

    def new(self, title: str) -> Document: ...

    def fragment(self, entries: list[Entry], note: str) -> str:
        """A stand-alone file holding ``entries`` (as their source text when they have one) and
        ``note`` as a comment: the body of a ``.conflict`` file, readable by ``parse``."""
        ...


def get_format(name: str) -> Format:
    """The format called ``name``; raises ``MissingDependencyError`` when YAML is asked for without PyYAML."""
    if name == "yaml":
        from .yaml_format import YAML

        return YAML
    from .markdown import MARKDOWN

    return MARKDOWN
