"""The markdown memory format, as ClawCode specifies it::

    # Preferences

    ## Programming Languages
    - User prefers Python for scripting tasks (2026-02-09) <!-- id:0194… key:user-prefers-python … -->
      - tags: preferences, programming
      - metadata: {"confidence": "high"}

A bullet is a memory: its content, then its date in parentheses, then an HTML comment marker
(invisible when rendered) carrying the id and the bookkeeping a person does not edit (key, exact
times, access count, links). Sub-bullets ``tags``, ``metadata`` (a JSON object), ``category``,
``type``, ``layer``, ``importance``, ``entity`` and ``source`` hold the rest; absent means the
default. ClawCode's hand-written sub-bullets read as metadata: another ``name: value`` is the
metadata entry ``name`` (text), and a ``metadata`` that is not a JSON object is
``{"metadata": text}``; engram writes both back inside its ``metadata`` JSON line, which reads
back the same. A ``##`` subheading becomes the ``section`` metadata of the bullets under it. Content may
span lines: continuation lines are indented two spaces (a line starting with ``-`` or ``\\`` is
escaped with ``\\``). A bullet without a marker is new: it gets an id at the next sync. A file is
read with either line ending and written with its own (``document.line_ending``).

Content round-trips byte for byte whatever it holds: what could be mistaken for file structure or
must not reach a file raw is written as an HTML character reference, which a markdown viewer shows
as the character itself. That is ``<`` opening ``<!--`` (so pasted marker text stays content),
control characters other than tab and line feed (carriage returns, terminal escape sequences),
Unicode line separators, and ``&`` opening a character reference (so one typed by hand stays as
typed). Reading decodes every numeric reference ``&#N;`` in content. A raw ``<!--`` left in a
bullet once its marker is taken out is therefore a marker cut short or wrapped: the entry is
invalid (``_damaged_marker``), never a new memory holding marker text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import Category, layer_for_type

from .document import Parsed, line_ending, utf8_size
from .entry import SECTION_KEY, Entry, Problem, build_entry, default_type, show_instant, utc

_BULLET = re.compile(r"^[-*] (.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FIELD = re.compile(r"^(?:  |\t)[-*] ([A-Za-z_][\w-]*):(?:\s(.*)|$)")
_MARKER = re.compile(r"\s*<!--\s*id:(\S*)(.*?)-->")
_DATE = re.compile(r"\s*\((\d{4}-\d{2}-\d{2}[^()]*)\)\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
# A marker cut short or wrapped onto the next line: its id, and whether text is one at all.
_DAMAGED = re.compile(r"<!--\s*id:([0-9A-Za-z-]{8,})")
_MARKERISH = re.compile(r"<!--.*\b(?:id|key|created|updated|seen|recalls):", re.S)
# What content escapes on writing (see the module doc) and the references reading decodes.
_UNSAFE = re.compile(r"<(?=!--)|&(?=#\d+;)|[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
_REFERENCE = re.compile(r"&#(\d{1,7});")

# Sub-bullet names and the entry field each one fills.
_FIELDS = {
    "tags": "tags", "metadata": "metadata", "category": "category", "type": "type", "layer": "layer",
    "importance": "importance", "entity": "related_entity", "related_entity": "related_entity", "source": "source",
    "search_context": "search_context", "valid_from": "valid_from", "valid_until": "valid_until",
}
# Marker names and the entry field each one fills.
_MARKER_FIELDS = {
    "key": "key", "created": "created_at", "updated": "updated_at", "seen": "last_accessed",
    "recalls": "recall_count", "links": "links", "superseded": "superseded_by", "superseded_at": "superseded_at",
}
# The entry fields only a marker fills, by the name the marker gives them: an error names what the file says.
_MARKER_NAMES = {field: name for name, field in _MARKER_FIELDS.items()}


@dataclass
class _Block:
    lines: list[str]
    entry_id: str | None = None  # set for entry blocks (valid or not) that carry an id
    section: str | None = None
    is_entry: bool = False
    heading: str | None = None  # for a "## ..." heading line: its text
    start: int = 0  # the line it was parsed from (0 for blocks added since)


@dataclass
class MarkdownDocument:
    blocks: list[_Block]
    parsed: Parsed = field(default_factory=Parsed)
    # The file's own line ending (``document.line_ending``): ``text`` writes every line with it.
    newline: str = "\n"
    # Indices of the heading blocks, kept while entries are added (an import adds thousands, and
    # finding the headings again for each made it quadratic); None after any other change.
    _headings: list[int] | None = field(default=None, repr=False, compare=False)
    # The text as last rendered, until the next change: a sync renders a changed file up to three
    # times (its size, its text, the copy it keeps), each a walk over every entry of the file.
    # Kept in pieces, joined when asked for: entries appended at the end add a piece each, since
    # adding each to one string copied the whole file per entry (~0.6 ms a store at 10,000).
    _text: list[str] | None = field(default=None, repr=False, compare=False)
    # ``utf8_size`` of ``_text`` while it is kept: grown with each piece added (``size``).
    _bytes: int = field(default=0, repr=False, compare=False)

    def _delete(self, i: int) -> None:
        del self.blocks[i]
        self._headings = self._text = None

    def _find(self, entry_id: str) -> int | None:
        for i, block in enumerate(self.blocks):
            if block.is_entry and block.entry_id == entry_id:
                return i
        return None

    def replace(self, entry_id: str, entry: Entry) -> bool:
        i = self._find(entry_id)
        if i is None:
            return False
        self._text = None
        if self.blocks[i].section != _section(entry):
            self._delete(i)
            self.add(entry)
        else:
            self.blocks[i] = _Block(_lines(entry), entry.id, _section(entry), True)
        return True

    def set_at(self, line: int, entry: Entry | None) -> bool:
        """Replace (or, with None, remove) the entry parsed at ``line``: how entries without an id
        are given one."""
        for i, block in enumerate(self.blocks):
            if block.is_entry and block.start == line:
                self._text = None
                if entry is None:
                    self._delete(i)
                else:
                    self.blocks[i] = _Block(_lines(entry), entry.id, block.section, True)
                return True
        return False

    def remove(self, entry_id: str) -> bool:
        i = self._find(entry_id)
        if i is None:
            return False
        self._delete(i)
        return True

    def remove_all(self, entry_ids: Iterable[str]) -> None:
        left = Counter(entry_ids)
        kept: list[_Block] = []
        for block in self.blocks:
            if block.is_entry and block.entry_id is not None and left[block.entry_id] > 0:
                left[block.entry_id] -= 1  # the first blocks with that id, as ``_find`` finds them
            else:
                kept.append(block)
        self.blocks = kept
        self._headings = self._text = None

    def copy(self) -> MarkdownDocument:
        return replace(self, blocks=list(self.blocks), _headings=None, _text=None)

    def add(self, entry: Entry) -> None:
        rendered, self._text = self._text, None
        section = _section(entry)
        block = _Block(_lines(entry), entry.id, section, True)
        if self._headings is None:
            self._headings = [i for i, b in enumerate(self.blocks) if b.heading is not None]
        headings = self._headings
        if section is None:
            end = headings[0] if headings else len(self.blocks)
        else:
            start = next((i for i in headings if self.blocks[i].heading == section), None)
            if start is None:
                self._trim_end()
                self.blocks += [_Block([""]), _Block([f"## {section}"], heading=section), _Block([""]), block]
                self._headings = None
                return
            end = next((i for i in headings if i > start), len(self.blocks))
        # After the last non-blank block of the region, so blank lines stay between sections.
        at = end
        while (at > 1 and not self.blocks[at - 1].is_entry and self.blocks[at - 1].lines == [""]
               and not self.blocks[at - 2].lines[0].startswith("#")):
            at -= 1
        self.blocks.insert(at, block)
        shift = 1
        if at + 1 < len(self.blocks) and self.blocks[at + 1].heading is not None:
            self.blocks.insert(at + 1, _Block([""]))
            shift = 2
        self._headings = [i if i < at else i + shift for i in headings]
        if rendered is not None and shift == 1 and self._last_written(at):
            # Added after the last line the text shows: the text grows by the entry's lines, as
            # rendering every block again would give, without the walk over every entry (a
            # store into a file of 10,000 entries spent ~4 ms of its ~12 here).
            piece = "\n".join(block.lines).rstrip("\n").replace("\n", self.newline) + self.newline
            rendered.append(piece)
            self._text, self._bytes = rendered, self._bytes + utf8_size(piece)

    def _last_written(self, i: int) -> bool:
        """Whether block ``i`` comes right after a line ``text`` shows and only blank lines follow
        it (which ``text`` leaves out)."""
        before = self.blocks[i - 1] if i > 0 else None
        if before is None or (not before.is_entry and before.lines == [""]):
            return False
        return all(not b.is_entry and b.lines == [""] for b in self.blocks[i + 1:])

    def _trim_end(self) -> None:
        self._text = None
        while self.blocks and not self.blocks[-1].is_entry and self.blocks[-1].lines == [""]:
            self.blocks.pop()

    def text(self) -> str:
        if self._text is not None:
            if len(self._text) > 1:
                self._text = ["".join(self._text)]
            return self._text[0]
        lines: list[str] = []
        previous_blank = False
        for block in self.blocks:
            blank = not block.is_entry and block.lines == [""]
            if not (blank and previous_blank):  # removals leave no runs of blank lines
                lines.extend(block.lines)
            previous_blank = blank
        while lines and lines[-1] == "":
            lines.pop()
        text = self.newline.join(lines) + self.newline
        self._text, self._bytes = [text], utf8_size(text)
        return text

    def size(self) -> int:
        if self._text is None:
            self.text()
        return self._bytes


class MarkdownFormat:
    name = "markdown"
    suffix = ".md"
    suffixes = (".md",)

    def parse(self, text: str, path: str, *, max_content_chars: int) -> MarkdownDocument:
        return parse(text, path, max_content_chars=max_content_chars)

    def new(self, title: str) -> MarkdownDocument:
        return MarkdownDocument([_Block([f"# {title}"]), _Block([""])])

    def fragment(self, entries: list[Entry], note: str) -> str:
        parts = []
        for e in entries:  # under its subheading, so the section survives a round trip
            heading = f"## {_section(e)}\n" if _section(e) is not None else ""
            parts.append(heading + (e.text or render_entry(e)).rstrip("\n"))
        body = "\n".join(parts)
        comment = " ".join(note.replace("--", "-").splitlines())
        return f"<!-- {comment} -->\n{body}\n"


MARKDOWN = MarkdownFormat()


def parse(text: str, path: str, *, max_content_chars: int) -> MarkdownDocument:
    """Parse a markdown memory file; problems are collected with their line, never raised."""
    doc = MarkdownDocument([], newline=line_ending(text))
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    section: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        heading = _HEADING.match(line)
        if _BULLET.match(line):
            end = _bullet_end(lines, i)
            block = _Block(lines[i:end], section=section, is_entry=True, start=i + 1)
            _read_bullet(doc, block, path, i + 1, max_content_chars)
            doc.blocks.append(block)
            i = end
            continue
        if heading and len(heading.group(1)) >= 2:
            section = heading.group(2) or None
            doc.blocks.append(_Block([line], heading=section))
        else:
            if line.strip() and not heading and not _COMMENT.match(line):
                doc.parsed.problems.append(Problem(path, i + 1, "text outside a bullet is not a memory; left as it is"))
            doc.blocks.append(_Block([line]))
        i += 1
    return doc


def _bullet_end(lines: list[str], start: int) -> int:
    """The line after the bullet that starts at ``start``: indented lines (and blank lines followed
    by an indented line) belong to it."""
    i = start + 1
    while i < len(lines):
        if lines[i][:1] in (" ", "\t") and lines[i].strip():
            i += 1
            continue
        if not lines[i].strip():
            j = i
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and lines[j][:1] in (" ", "\t"):
                i = j
                continue
        break
    return i


def _read_bullet(doc: MarkdownDocument, block: _Block, path: str, line_no: int, max_chars: int) -> None:
    raw: dict[str, Any] = {}
    content_lines = [_BULLET.match(block.lines[0]).group(1)]  # type: ignore[union-attr]
    problem: str | None = None
    extra: dict[str, tuple[int, str]] = {}  # ClawCode's own ``- name: value`` sub-bullets, by name
    for offset, line in enumerate(block.lines[1:], start=1):
        found = _FIELD.match(line)
        if found:
            name, value = found.group(1).lower(), (found.group(2) or "").strip()
            if name not in _FIELDS:
                if found.group(1) in extra:
                    problem = problem or f"line {line_no + offset}: {jsondoc.shown(found.group(1))} is given twice"
                extra[found.group(1)] = (line_no + offset, value)
                continue
            if name == "search_context" and value.startswith('"'):
                try:  # written as a JSON string so line breaks survive the round trip
                    value = json.loads(value)
                except ValueError:
                    problem = problem or f"line {line_no + offset}: search_context is not a JSON string"
                    continue
            elif name in _QUOTABLE and value.startswith('"'):
                value = _quoted(value)
            raw[_FIELDS[name]] = value
        else:
            content_lines.append(_unindent(line))
    joined = "\n".join(content_lines)
    marker = _MARKER.search(joined)
    if marker:
        block.entry_id = marker.group(1) or None
        raw["id"] = marker.group(1) or None
        joined = joined[: marker.start()] + joined[marker.end():]
        try:
            raw.update(_marker_fields(marker.group(2)))
        except ValidationError as exc:
            problem = problem or str(exc)
    if "<!--" in joined:  # content never holds it raw (written as &#60;!--): a marker cut short or wrapped
        _damaged_marker(doc, block, joined, line_no)
        problem = problem or (f"line {line_no + _line_of(block.lines, '<!--')}: '<!--' that is not a whole marker"
                              " ('<!-- id:... -->' on the bullet's line); mend it, or write &#60;!-- for the text")
    date = _DATE.search(joined.rstrip())
    if date:
        raw["date"] = date.group(1).strip()
        joined = joined.rstrip()[: date.start()]
    raw["content"] = _unescape(joined.strip())  # (the content's own whitespace at its ends is escaped)
    where = _problem_line(block, line_no, problem)
    try:
        if problem:
            raise ValidationError("entry", problem.split(": ", 1)[-1])
        if "metadata" in raw or extra:
            raw["metadata"] = _with_fields(_metadata(raw.get("metadata", "")), extra)
        if block.section is not None:
            raw["metadata"] = {**(raw.get("metadata") or {}), SECTION_KEY: block.section}
        entry = build_entry(raw, max_content_chars=max_chars, line=line_no, text="\n".join(block.lines))
    except ValidationError as exc:
        told = f"marker {_MARKER_NAMES[exc.field]}: {exc.reason}" if exc.field in _MARKER_NAMES else str(exc)
        doc.parsed.problems.append(Problem(path, where, f"entry not imported: {told}"))
        if block.entry_id:
            doc.parsed.invalid_ids.add(block.entry_id)
        return
    doc.parsed.entries.append(entry)


def _damaged_marker(doc: MarkdownDocument, block: _Block, joined: str, line_no: int) -> None:
    """A bullet holding a raw ``<!--`` that is not a whole marker is invalid, never a new entry
    with marker text for content and its memory forgotten: the id in it, when it can be read, is
    that of an entry present but invalid. When none can, the file is left whole until it is mended
    if the text looks like a marker (it may be any of the file's memories)."""
    if block.entry_id is None:
        found = _DAMAGED.search(joined)
        block.entry_id = found.group(1) if found else None
    if block.entry_id is None and _MARKERISH.search(joined):
        doc.parsed.broken = True


def _line_of(lines: list[str], text: str) -> int:
    return next((i for i, line in enumerate(lines) if text in line), 0)


def _problem_line(block: _Block, line_no: int, problem: str | None) -> int:
    if problem and problem.startswith("line "):
        return int(problem[5:].split(":", 1)[0])
    return line_no


def _unindent(line: str) -> str:
    if line.startswith("\t"):
        line = line[1:]
    elif line.startswith("  "):
        line = line[2:]
    if line[:1] == "\\" and line[1:2] in ("-", "\\", "*"):
        line = line[1:]
    return line


def _metadata(value: str) -> dict[str, Any]:
    """A ``metadata`` sub-bullet: a JSON object (what engram writes), or ClawCode's free text
    (``- metadata: from standup``), kept as ``{"metadata": text}``. Text opening with ``{`` is
    meant as JSON, so a malformed object is refused rather than kept as text."""
    if not value:
        return {}
    if not value.startswith("{"):
        return {"metadata": value}
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValidationError("metadata", f"malformed JSON ({exc.msg} at char {exc.pos})", "a JSON object") from None
    if not isinstance(data, dict):
        raise ValidationError("metadata", f"got {jsondoc.kind(data)}", "a JSON object")
    return data


def _with_fields(metadata: dict[str, Any], extra: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """``metadata`` with ClawCode's other sub-bullets (``- project: engram``) as text entries; engram
    writes them back inside the ``metadata`` line, which reads back the same. A name that the
    ``metadata`` line holds too is refused: one of the two values would be lost."""
    for name, (line, value) in extra.items():
        if name in metadata:
            raise ValidationError("entry", f"line {line}: {jsondoc.shown(name)} is given twice (here and in metadata)",
                                  "each metadata name once")
        metadata[name] = value
    return metadata


def _marker_fields(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in text.split():
        name, sep, value = item.partition(":")
        if not sep or name not in _MARKER_FIELDS:
            raise ValidationError("marker", f"cannot read {jsondoc.shown(item)}", f"{', '.join(_MARKER_FIELDS)} as name:value")
        value = unquote(value)
        if name == "links":
            out["links"] = [v for v in value.split(",") if v]
        else:
            out[_MARKER_FIELDS[name]] = value
    return out


def _section(entry: Entry) -> str | None:
    value = entry.metadata.get(SECTION_KEY)
    if isinstance(value, str) and value.strip() == value and value and "\n" not in value and "#" not in value:
        return value
    return None


def _lines(entry: Entry) -> list[str]:
    # Split on line feeds only, as parsing does: str.splitlines would also break at \x85 or
    # \u2028 inside a metadata or tag value and cut the entry in two.
    return render_entry(entry).split("\n")


def render_entry(entry: Entry) -> str:
    """The markdown text of one entry (no trailing newline)."""
    content = _escape_ends(_escape_text(entry.content)).split("\n")
    lines = [f"- {content[0]}"] + [("  " + _escape(line)) if line else "" for line in content[1:]]
    tail = []
    if entry.created_at is not None:
        tail.append(f"({utc(entry.created_at).date().isoformat()})")
    if entry.id:
        tail.append(f"<!-- {_marker(entry)} -->")
    if tail:
        lines[-1] = f"{lines[-1]} {' '.join(tail)}"
    for name, value in _visible_fields(entry):
        lines.append(f"  - {name}: {value}")
    return "\n".join(lines)


def _escape_text(text: str) -> str:
    return _UNSAFE.sub(lambda m: f"&#{ord(m.group())};", text)


def _escape_ends(text: str) -> str:
    """Whitespace opening or closing the content as references (``&#32;``, ``&#10;``): reading
    trims what a person typed around a bullet's text, and these are the content's own."""
    body = text.strip()
    if not body:
        return text
    start, end = text.index(body[0]), len(text.rstrip())
    return _references(text[:start]) + text[start:end] + _references(text[end:])


def _references(part: str) -> str:
    return "".join(f"&#{ord(c)};" for c in part)


def _unescape(text: str) -> str:
    def decode(match: re.Match[str]) -> str:
        code = int(match.group(1))
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group()

    return _REFERENCE.sub(decode, text)


def _escape(line: str) -> str:
    return "\\" + line if line[:1] in ("-", "\\", "*") else line


# ``entity`` and ``source`` are written as they are when they are plain one-line text (what a
# person types), else as a JSON string: the model takes line breaks and control characters in
# them, and one written raw cut its entry in two (the next sync then dropped the lines after it).
_QUOTABLE = ("entity", "related_entity", "source")
_PLAIN_FIELD = re.compile(r'[^"\s]([^\n\r]*\S)?')
_UNSAFE_IN_JSON = re.compile(r"[\x7f-\x9f\u2028\u2029\ufeff]")


def _one_line(value: str) -> str:
    if _PLAIN_FIELD.fullmatch(value) and not _UNSAFE.search(value):
        return value
    # json.dumps escapes the C0 controls; the line separators it leaves raw are escaped too.
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def _quoted(value: str) -> str:
    """An ``entity`` or ``source`` written as a JSON string, decoded; a hand-written value that only
    opens with a quote (``"Bob" and co``) is kept as typed."""
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, str) else value


def _marker(entry: Entry) -> str:
    parts = [f"id:{entry.id}"]
    if entry.key:
        parts.append(f"key:{quote(entry.key, safe='')}")
    if entry.created_at is not None:
        parts.append(f"created:{entry.created_at!r}")
    if entry.updated_at is not None and entry.updated_at != entry.created_at:
        parts.append(f"updated:{entry.updated_at!r}")
    if entry.last_accessed is not None:
        parts.append(f"seen:{entry.last_accessed!r}")
    if entry.recall_count:
        parts.append(f"recalls:{entry.recall_count}")
    if entry.links:
        parts.append("links:" + ",".join(quote(link, safe="") for link in entry.links))
    if entry.superseded_by:
        parts.append(f"superseded:{quote(entry.superseded_by, safe='')}")
    if entry.superseded_at is not None:
        parts.append(f"superseded_at:{entry.superseded_at!r}")
    return " ".join(parts)


def _visible_fields(entry: Entry) -> list[tuple[str, str]]:
    fields: list[tuple[str, str]] = []
    if entry.tags:
        fields.append(("tags", ", ".join(entry.tags)))
    if entry.category is not Category.KNOWLEDGE:
        fields.append(("category", entry.category.value))
    if entry.type != default_type(entry.category):
        fields.append(("type", entry.type))
    if entry.layer != layer_for_type(entry.type):
        fields.append(("layer", entry.layer.value))
    if entry.importance != 0.5:
        fields.append(("importance", repr(entry.importance)))
    if entry.related_entity:
        fields.append(("entity", _one_line(entry.related_entity)))
    if entry.source:
        fields.append(("source", _one_line(entry.source)))
    if entry.search_context:
        fields.append(("search_context", json.dumps(entry.search_context, ensure_ascii=False)))
    for name in ("valid_from", "valid_until"):
        if getattr(entry, name) is not None:
            fields.append((name, show_instant(getattr(entry, name))))
    metadata = dict(entry.metadata)
    if _section(entry) is not None:
        metadata.pop(SECTION_KEY)
    if metadata:
        fields.append(("metadata", json.dumps(metadata, ensure_ascii=False)))
    return fields
