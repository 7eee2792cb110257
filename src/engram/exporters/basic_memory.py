"""engram -> basic-memory / Obsidian: one markdown note per memory in a folder.

A note is named and permalinked by the memory's key, with front matter (``title``, ``type``,
``tags``, ``permalink``, ``created``, ``modified`` and engram's ``engram_id``, ``category``,
``importance``, ``engram_related_entity``, ``engram_search_context`` and ``engram_source`` (those
the memory has) and, when it has any, the memory's metadata as JSON in ``engram_metadata``), the
content as its body, and each link as a ``- links_to [[other-key]]`` relation, so basic-memory
builds the same graph and ``engram import --from basic-memory`` reads it back byte for byte. Keys
become file names with anything unsafe replaced; the folder is created when missing and notes
already there are overwritten, other files left alone.

The content is the note's prose when the import reads exactly it back from the prose; otherwise
(whitespace at either end, three line breaks in a row, lines that read as observations, relations
or basic-memory's section headings, a line repeating the title) it is written as one fenced code
block, ```` ```engram ````, fenced by more backticks than any run in the content. Why a fence
rather than the content escaped into the front matter: a basic-memory user opening the note still
sees the memory, as it is, in the note's body, and editing it there edits the memory (a copy in
the front matter would hide it, or hold a second copy that an edit of the body silently leaves
behind); basic-memory (markdown-it) reads nothing inside a fence as an observation or relation,
so it builds no observations engram never had; and the fence is the only markdown whose text
CommonMark keeps verbatim, leading and trailing whitespace and every line ending included.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path

from engram.engine import Engram
from engram.errors import StorageError
from engram.exporters import visible
from engram.files import own_folder
from engram.importers.base import exported_source, split_provenance
from engram.importers.basic_memory import ENGRAM_NAMES, FENCE_INFO, KIND, PROVENANCE, reads_as
from engram.model import Memory

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_BACKTICKS = re.compile(r"`+")


def write(engram: Engram, folder: Path, *, synced: Path | None = None) -> int:
    """Write every visible memory as a note under ``folder``; returns how many were written.
    Raises ``ValidationError`` naming ``path``, before anything is written, when ``folder`` is the
    memory folder engram syncs (``synced``: ``files.dir`` while ``files.enabled``) or a folder
    inside it, and ``StorageError`` when a note cannot be written."""
    own_folder.refuse_export(folder, synced)
    memories = list(visible(engram))
    names = _names(memories)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for memory in memories:
            # newline="": the content's line endings (\r\n, a lone \r) are written as it has them.
            (folder / f"{names[memory.id]}.md").write_text(_note(memory, names), encoding="utf-8", newline="")
    except OSError as exc:
        raise StorageError(f"cannot write notes into {folder}: {exc}") from exc
    return len(memories)


def _names(memories: list[Memory]) -> dict[str, str]:
    """Each memory's note name, none taken twice: keys that differ only in what a file name cannot
    hold ("a b", "a/b") or in case (one file on macOS and Windows) wrote one note over the other.
    A later one takes its id after the name; its key is carried in ``engram_key``."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for memory in memories:
        name = _name(memory)
        if name.casefold() in taken:
            name = f"{name}-{memory.id}"
        taken.add(name.casefold())
        names[memory.id] = name
    return names


def _name(memory: Memory) -> str:
    scope = "" if memory.scope.session is None else f"{_UNSAFE.sub('-', memory.scope.session)}--"
    return scope + (_UNSAFE.sub("-", memory.key).strip("-.") or memory.id)


def _note(memory: Memory, names: dict[str, str]) -> str:
    name = names[memory.id]
    front = [
        "---",
        f"title: {_quote(name)}",
        f"type: {memory.type}",
        f"tags: [{', '.join(_quote(t) for t in memory.tags)}]",
        f"permalink: {name}",
        f"created: {_iso(memory.created_at)}",
        f"modified: {_iso(memory.updated_at)}",
        f"engram_id: {memory.id}",
        # The file name and permalink are the key made safe for a path (and a session's prefix):
        # the key itself, when they differ, so the import gives the memory its key back.
        *([f"engram_key: {_quote(memory.key)}"] if memory.key != name else []),
        f"category: {memory.category.value}",
        f"importance: {memory.importance}",
    ]
    # A memory imported from basic-memory holds where it came from beside its own metadata: the
    # import of this note records where it comes from anew.
    own, origin = split_provenance(memory.metadata, PROVENANCE) if memory.source == KIND else (dict(memory.metadata), {})
    # engram's fields basic-memory has none for, under engram's names (basic-memory keeps a key it does
    # not know as the note's metadata), the source as ``exported_source`` gives it.
    source = exported_source(memory, KIND, origin)
    front += [f"{ENGRAM_NAMES[name]}: {_quote(value)}" for name, value in (
        ("related_entity", memory.related_entity), ("search_context", memory.search_context), ("source", source))
        if isinstance(value, str) and value]
    if own:
        # JSON with every non-ASCII character escaped is printable ASCII on one line: in single
        # quotes YAML takes it as it is (a quote doubled), and JSON gives every value back exactly.
        text = json.dumps(own, ensure_ascii=True)
        front.append(f"engram_metadata: '{text.replace(chr(39), chr(39) * 2)}'")
    relations = "".join(f"- links_to [[{names[i]}]]\n" for i in memory.links if i in names)
    tail = f"\n## Relations\n{relations}" if relations else ""
    prose = f"\n{memory.content}\n{tail}"
    body = prose if reads_as(prose, name) == memory.content else f"\n{_fenced(memory.content)}\n{tail}"
    return "\n".join([*front, "---"]) + "\n" + body


def _fenced(content: str) -> str:
    """The content as a fenced block whose fence no run of backticks in it can close. The line
    break before the closing fence is the fence's: the content ends as it ends."""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(content)), default=0))
    return f"{fence}{FENCE_INFO}\n{content}\n{fence}"


def _quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back as it is: a character YAML would
    refuse in a file (a control, C1 control, U+FFFE), fold (a line or paragraph separator, U+0085)
    or strip (a byte-order mark) is escaped."""
    return '"' + "".join(_escaped(c) for c in text) + '"'


def _escaped(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    code = ord(char)
    printable = 0x20 <= code <= 0x7E or (0xA0 <= code <= 0xFFFD and code not in (0x2028, 0x2029, 0xFEFF)) \
        or code >= 0x10000
    return char if printable else f"\\u{code:04x}"


def _iso(ts: float) -> str:
    """``ts`` as an ISO 8601 time in UTC with every digit of its fraction the float needs (its
    shortest repr's), so the import gives the very float back; basic-memory's YAML reads it too (to
    the microsecond). Whole seconds have no fraction, as basic-memory writes them."""
    exact = Decimal(repr(ts))
    whole = int(exact.to_integral_value(rounding=ROUND_FLOOR))
    fraction = format(exact - whole, "f").partition(".")[2].rstrip("0")
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"
