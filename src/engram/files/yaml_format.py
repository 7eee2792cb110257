"""The YAML memory format, as ClawCode specifies it::

    memories:
      - id: mem_456
        content: "User prefers Python for scripting tasks"
        tags: [preferences, programming]
        timestamp: "2026-02-09T10:30:00Z"
        context:
          session_id: sess_123

``context`` is the memory's metadata; engram adds what the format lacks (key, category, type,
layer, importance, related_entity, source, exact times, links) as further keys, omitting
defaults. A file that is not valid YAML is reported with its line and left untouched; an invalid
item is reported with its line and the others are still read. Comments are not kept when engram
rewrites a YAML file (PyYAML drops them); use markdown for hand-annotated files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from engram import jsondoc
from engram.errors import MissingDependencyError, ValidationError
from engram.model import Category, is_number, layer_for_type

from .document import Parsed, line_ending, utf8_size
from .entry import Entry, Problem, build_entry, default_type, iso, show_instant

try:
    import yaml
except ImportError:  # pragma: no cover - exercised only without the extra
    yaml = None  # type: ignore[assignment]

_KEYS = {
    "id": "id", "content": "content", "tags": "tags", "timestamp": "date", "context": "metadata",
    "metadata": "metadata", "key": "key", "category": "category", "type": "type", "layer": "layer",
    "importance": "importance", "related_entity": "related_entity", "entity": "related_entity",
    "source": "source", "created_at": "created_at", "updated_at": "updated_at",
    "last_accessed": "last_accessed", "recall_count": "recall_count", "links": "links",
    "superseded_by": "superseded_by", "search_context": "search_context", "valid_from": "valid_from",
    "valid_until": "valid_until", "superseded_at": "superseded_at",
}


def _require() -> Any:
    if yaml is None:
        raise MissingDependencyError("YAML memory files", "files", "pyyaml")
    return yaml


_LOADER: Any = None


def _loader() -> Any:
    """A safe loader whose unquoted time that is no real one (``2024-13-01``, ``2024-06-03 25:00:00``) stays
    its text. PyYAML's raised ValueError while building the document, no ``YAMLError``: the file
    (every entry of it) went unread with no line said. As text, the field's own check refuses it,
    naming the field, the item's line and what is allowed, and the file's other entries are read."""
    global _LOADER
    if _LOADER is None:
        base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

        class Loader(base):  # type: ignore[misc, valid-type]
            pass

        def timestamp(loader: Any, node: Any) -> Any:
            try:
                return base.construct_yaml_timestamp(loader, node)
            except ValueError:
                return loader.construct_scalar(node)

        Loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
        _LOADER = Loader
    return _LOADER


_DUMPER: Any = None


def _dumper() -> Any:
    """A safe dumper writing multi-line content as a literal block, readable and diff-friendly."""
    global _DUMPER
    if _DUMPER is None:
        base = getattr(yaml, "CSafeDumper", None) or yaml.SafeDumper

        class Dumper(base):  # type: ignore[misc, valid-type]
            pass

        def text(dumper: Any, value: str) -> Any:
            style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.split("\n")) else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

        Dumper.add_representer(str, text)
        _DUMPER = Dumper
    return _DUMPER


@dataclass
class YamlDocument:
    title: str
    items: list[Any]
    parsed: Parsed = field(default_factory=Parsed)
    original: str | None = None
    # The file's own line ending (``document.line_ending``): PyYAML dumps with "\n", turned into it.
    newline: str = "\n"
    lines: list[int] = field(default_factory=list)  # start line of each item (0 when added since)
    # Each item as dumped alone (None until asked for), in step with ``items``: the file's text is
    # their concatenation (the same text as dumping the list whole), so a change dumps only the
    # items it touched. PyYAML's representer is Python: a 10,000-item file took ~0.5 s to dump,
    # and a sync pass asks for a changed file's text several times.
    _dumped: list[str | None] = field(default_factory=list, repr=False, compare=False)
    # The text as last rendered, until the next change other than an add at the end, in pieces
    # joined when asked for (as ``MarkdownDocument._text``): a store asks for its file's text (its
    # size, its text) several times, and each walk over 5,000 items took ~0.5 ms.
    _text: list[str] | None = field(default=None, repr=False, compare=False)
    # ``utf8_size`` of ``_text`` while it is kept: grown with each piece added (``size``).
    _bytes: int = field(default=0, repr=False, compare=False)

    def _find(self, entry_id: str) -> int | None:
        for i, item in enumerate(self.items):
            if isinstance(item, dict) and str(item.get("id")) == entry_id:
                return i
        return None

    def replace(self, entry_id: str, entry: Entry) -> bool:
        i = self._find(entry_id)
        if i is None:
            return False
        self.items[i] = render_item(entry)
        self._forget(i)
        return True

    def set_at(self, line: int, entry: Entry | None) -> bool:
        """Replace (or, with None, remove) the item parsed at ``line``."""
        if line not in self.lines:
            return False
        i = self.lines.index(line)
        if entry is None:
            self._forget(i, removed=True)
            del self.items[i], self.lines[i]
        else:
            self.items[i] = render_item(entry)
            self._forget(i)
        return True

    def remove(self, entry_id: str) -> bool:
        i = self._find(entry_id)
        if i is None:
            return False
        self._forget(i, removed=True)
        del self.items[i], self.lines[i]
        return True

    def remove_all(self, entry_ids: Iterable[str]) -> None:
        left = Counter(entry_ids)
        self._in_step()
        keep: list[int] = []
        for i, item in enumerate(self.items):
            if isinstance(item, dict) and left[key := str(item.get("id"))] > 0:
                left[key] -= 1  # the first items with that id, as ``_find`` finds them
            else:
                keep.append(i)
        self.items = [self.items[i] for i in keep]
        self.lines = [self.lines[i] for i in keep]
        self._dumped = [self._dumped[i] for i in keep]
        self._text = None

    def copy(self) -> YamlDocument:
        self._in_step()
        return replace(self, items=list(self.items), lines=list(self.lines), _dumped=list(self._dumped), _text=None)

    def add(self, entry: Entry) -> None:
        self._in_step()
        rendered, self._text = (self._text if self.items else None), None  # no items: "memories: []"
        self.items.append(render_item(entry))
        self.lines.append(0)
        self._dumped.append(None)
        if rendered is not None:
            self._dumped[-1] = piece = _dump([self.items[-1]])
            last, rendered[-1] = rendered[-1], _not_ended(rendered[-1], self.newline)  # no longer the last item
            rendered.append(self._ended(piece))
            # Less the end marker taken off (ASCII), plus the new piece.
            self._text, self._bytes = rendered, self._bytes - (len(last) - len(rendered[-2])) + utf8_size(rendered[-1])

    def _in_step(self) -> None:
        if len(self._dumped) != len(self.items):  # items set whole (parsing): nothing dumped yet
            self._dumped = [None] * len(self.items)

    def _forget(self, i: int, *, removed: bool = False) -> None:
        self._in_step()
        self._text = None
        if removed:
            del self._dumped[i]
        else:
            self._dumped[i] = None

    def text(self) -> str:
        if self.parsed.broken and self.original is not None:
            return self.original
        if not self.items:
            return self._ended(f"# {self.title}\n" + _dump({"memories": []}))
        if self._text is not None:
            if len(self._text) > 1:
                self._text = ["".join(self._text)]
            return self._text[0]
        self._in_step()
        dumped = self._dumped
        for i, item in enumerate(self.items):
            if dumped[i] is None:
                dumped[i] = _dump([item])
        last = len(dumped) - 1
        text = self._ended(f"# {self.title}\nmemories:\n" + "".join(
            piece if i == last else _not_ended(piece, "\n") for i, piece in enumerate(dumped)))  # type: ignore[arg-type]
        self._text, self._bytes = [text], utf8_size(text)
        return text

    def size(self) -> int:
        if not self.items or (self.parsed.broken and self.original is not None):
            return utf8_size(self.text())  # texts ``_text`` does not keep
        if self._text is None:
            self.text()
        return self._bytes

    def _ended(self, dumped: str) -> str:
        """``dumped`` (PyYAML's, every line ended by "\\n") in the file's own line endings: a line
        break in a dumped value is one of the file's lines too (a literal block's), and reading
        YAML turns either ending back into "\\n"."""
        return dumped if self.newline == "\n" else dumped.replace("\n", self.newline)


# PyYAML ends a document whose last value is a block kept with its trailing line breaks (``|+``)
# with YAML's document end marker, "...": an item dumped alone ends so, and followed by the next
# item's text it ended the list there ("did not find expected <document start>"), so a folder
# holding such a value before another item could not be read back. Dumping the list whole puts the
# marker only after the last item; the file's text, joined from items dumped alone, does the same.
_DOCUMENT_END = "...\n"


def _not_ended(piece: str, newline: str) -> str:
    """``piece`` without the document end marker PyYAML put after it (``_DOCUMENT_END``), to be
    followed by another item: a line "..." of its own can only be that marker, as every line of an
    item's value is indented; a value ending in "..." (``- note...``, a link to an imported id)
    ends its line the same way and is kept."""
    end = _DOCUMENT_END.replace("\n", newline)
    return piece[:-len(end)] if piece.endswith(newline + end) else piece


def _dump(data: Any) -> str:
    return str(_require().dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                               default_flow_style=False, width=100))


class YamlFormat:
    name = "yaml"
    suffix = ".yaml"
    suffixes = (".yaml", ".yml")

    def parse(self, text: str, path: str, *, max_content_chars: int) -> YamlDocument:
        return parse(text, path, max_content_chars=max_content_chars)

    def new(self, title: str) -> YamlDocument:
        _require()
        return YamlDocument(title, [])

    def fragment(self, entries: list[Entry], note: str) -> str:
        items = [render_item(e) for e in entries]
        body = _require().dump({"memories": items}, Dumper=_dumper(), sort_keys=False, allow_unicode=True)
        return "".join(f"# {line}\n" for line in note.splitlines()) + body


YAML = YamlFormat()


def parse(text: str, path: str, *, max_content_chars: int) -> YamlDocument:
    """Parse a YAML memory file; problems are collected with their line, never raised."""
    lib = _require()
    title = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("-", " ").replace("_", " ").title()
    doc = YamlDocument(title, [], original=text, newline=line_ending(text))
    try:
        loader = _loader()(text)  # one parse gives both the nodes (for line numbers) and the data
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except lib.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        doc.parsed.problems.append(Problem(path, line, f"not valid YAML, file left as it is: {getattr(exc, 'problem', exc)}"))
        doc.parsed.broken = True
        return doc
    if data is None:
        return doc
    if not isinstance(data, dict) or not isinstance(data.get("memories", []), list):
        doc.parsed.problems.append(Problem(path, 1, "expected a mapping with a 'memories:' list; file left as it is"))
        doc.parsed.broken = True
        return doc
    doc.items = data.get("memories") or []
    lines = _item_lines(node)
    doc.lines = [lines[i] if i < len(lines) else -i for i in range(len(doc.items))]
    for i, item in enumerate(doc.items):
        line = lines[i] if i < len(lines) else 1
        try:
            doc.parsed.entries.append(_entry(item, line, max_content_chars))
        except ValidationError as exc:
            doc.parsed.problems.append(Problem(path, line, f"entry not imported: {exc}"))
            if isinstance(item, dict) and item.get("id") is not None:
                doc.parsed.invalid_ids.add(str(item["id"]))
    return doc


def _item_lines(node: Any) -> list[int]:
    """1-based start line of each item of the ``memories`` list."""
    if node is None or not hasattr(node, "value") or not isinstance(node.value, list):
        return []
    for key, value in node.value:
        if getattr(key, "value", None) == "memories" and isinstance(getattr(value, "value", None), list):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _entry(item: Any, line: int, max_chars: int) -> Entry:
    if not isinstance(item, dict):
        raise ValidationError("entry", f"got {jsondoc.kind(item)}", "a mapping with at least content")
    raw: dict[str, Any] = {}
    for name, value in item.items():
        target = _KEYS.get(str(name))
        if target is None:
            raise ValidationError(str(name), "unknown field", ", ".join(sorted(set(_KEYS))))
        raw[target] = value
    if raw.get("id") is not None:
        raw["id"] = str(raw["id"])
    # A hand-written ``key: 2026`` is a number to YAML but a name to its writer: the library refuses
    # a number as a key, so the format turns it into its text here, as it does an id.
    if is_number(raw.get("key")):
        raw["key"] = str(raw["key"])
    for name in ("tags", "links"):
        if raw.get(name) is not None and not isinstance(raw[name], list | str):
            raise ValidationError(name, f"got {jsondoc.kind(raw[name])}", "a list")
    # No source text kept: a conflict file re-renders the item (dumping each one here is slow).
    return build_entry(raw, max_content_chars=max_chars, line=line)


def render_item(entry: Entry) -> dict[str, Any]:
    """The YAML mapping of one entry (ClawCode's keys first, defaults omitted)."""
    item: dict[str, Any] = {}
    if entry.id:
        item["id"] = entry.id
    item["content"] = entry.content
    if entry.tags:
        item["tags"] = list(entry.tags)
    if entry.created_at is not None:
        item["timestamp"] = iso(entry.created_at)
    if entry.metadata:
        item["context"] = dict(entry.metadata)
    if entry.key:
        item["key"] = entry.key
    if entry.category is not Category.KNOWLEDGE:
        item["category"] = entry.category.value
    if entry.type != default_type(entry.category):
        item["type"] = entry.type
    if entry.layer != layer_for_type(entry.type):
        item["layer"] = entry.layer.value
    if entry.importance != 0.5:
        item["importance"] = entry.importance
    for name in ("related_entity", "source", "search_context"):
        if getattr(entry, name):
            item[name] = getattr(entry, name)
    for name in ("created_at", "updated_at", "last_accessed"):
        value = getattr(entry, name)
        if value is not None and not (name == "updated_at" and value == entry.created_at):
            item[name] = value
    if entry.recall_count:
        item["recall_count"] = entry.recall_count
    if entry.links:
        item["links"] = list(entry.links)
    if entry.superseded_by:
        item["superseded_by"] = entry.superseded_by
    for name in ("valid_from", "valid_until"):
        if getattr(entry, name) is not None:
            item[name] = show_instant(getattr(entry, name))
    if entry.superseded_at is not None:
        item["superseded_at"] = entry.superseded_at
    return item
