"""basic-memory (and Obsidian vaults written its way): a folder of markdown notes.

A note: YAML front matter (``title``, ``type``, ``tags``, ``permalink``, any other field), prose,
observations ``- [category] text #tag (context)`` and relations ``- relation_type [[Target]]``;
``[[Target]]`` anywhere in the prose is a wiki-link. Mapping: each note is one memory (its prose,
or its title when it has none), keyed by its permalink, tagged with its front-matter tags, with the
other front-matter fields in ``metadata["basic_memory"]``; each observation is one memory of its
own (the category as its type and first tag, its ``#tags`` as tags, the context in metadata) linked
to its note; each relation and wiki-link links the two notes (the relation's type is kept in
``metadata["relations"]``). What is an observation, a relation or a link is what basic-memory's
own parser finds (``basic_memory_semantics``: markdown-it, CommonMark, and its plugins' rules): a
paragraph or heading reads as a list item does, one with a ``#tag`` and no ``[category]`` is an
observation with no category, and a line in a fenced or indented code block or an HTML block is
prose, never an observation, relation, heading or wiki-link. basic-memory writes no
dates in a note (it dates a note by its file): a note without ``created``/``date``
(``modified``/``updated``) in its front matter is dated by its file's modification time when the
folder is read from disk, its observations with it (its id then holds no time, so an edit of the file
finds it again; given a ``created`` later, it is still that memory: ``Record.undated_as``); a time written with more digits than a
microsecond is read to its last digit. A link to a note the folder does not hold is kept in
metadata only. Task checkboxes (``- [ ]``, ``- [x]``, tagged or not) are prose, as basic-memory
treats them. A note engram exported (``engram_id`` in its front matter) gets
its category and importance back, its related entity and search context from
``engram_related_entity`` and ``engram_search_context`` (none without them: its title is the memory's
key), its metadata from ``engram_metadata`` (JSON; the note's fields, its relations and the memory's
former source, ``engram_source``, included, in ``metadata["basic_memory"]`` beside it), its tags as written, and its
content from an ```` ```engram ```` fenced block when it has one (byte for byte: the exporter writes
one when the prose would not read back as it is; text outside the block, added later, follows it
after a blank line); it is skipped when the importing agent holds that id (it is that memory).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from engram.errors import MissingDependencyError, SnapshotError
from engram.importers.base import (
    Files,
    Plan,
    Record,
    engram_fields,
    fail,
    keep_engram_source,
    metadata,
    slug,
    tags,
    timestamp,
    type_word,
    with_provenance,
    wrong_type,
)
from engram.importers.basic_memory_semantics import Block, read_blocks
from engram.model import Category

KIND = "basic-memory"
# A list item with a category (not a task's mark), which the detection of a folder looks for on any line.
_OBSERVATION = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[(?![ xX-]\])[^\]\s][^\]]*\][ \t]+\S", re.M)
# A #tag; #a#b is two (basic-memory's reading), each taken as far as engram's tags reach.
_HASHTAG = re.compile(r"(?:^|\s)#([\w/-]+(?:#[\w/-]+)*)")
_MARKDOWN_BREAK = frozenset(("\r\n", "\r", "\n"))  # markdown-it's line endings (str.splitlines has more)
_CONTEXT = re.compile(r"\s*\(([^()]*)\)\s*$")
_SECTION = re.compile(r"^#+\s*(Observations|Relations)\s*$")  # basic-memory's headings of its lists
_BREAK = r"(?:\r\n|\r(?!\n)|\n)"  # one line ending: a \r\n is one, never a \r and a \n
_BLANK_RUN = re.compile(rf"({_BREAK})({_BREAK}){_BREAK}+")
_LEADING_BLANK_LINES = re.compile(rf"^(?:[ \t]*{_BREAK})+")
# engram's own export: a memory's content the prose would not give back as it is, fenced. The
# opening fence's info string says so; its backticks outnumber any run in the content, so the first
# line of as many backticks closes it (exporters/basic_memory.py says why a fence).
FENCE_INFO = "engram"
_FENCE_OPEN = re.compile(rf"^(`{{3,}}){FENCE_INFO}[ \t]*$")
PROVENANCE = "basic_memory"  # the metadata entry that says which note a memory came from
# engram's fields of a memory as the front matter of a note engram exported names them: those
# basic-memory has no field for under engram's own names, which basic-memory keeps as the note's metadata.
ENGRAM_NAMES = {"id": "engram_id", "key": "engram_key", "category": "category", "importance": "importance",
                "related_entity": "engram_related_entity", "search_context": "engram_search_context",
                "source": "engram_source"}


def looks_like(files: Files) -> bool:
    return any(text.startswith("---") and ("permalink:" in text or _OBSERVATION.search(text) or "[[" in text)
               for rel, text in list(files.items())[:50] if rel.endswith(".md"))


def read(files: Files, modified: Mapping[str, float] | None = None) -> Plan:
    """The plan of a folder's notes; ``modified`` (each file's modification time, when the folder
    is read from disk) dates the notes whose front matter has no dates."""
    notes = [_note(text, rel, (modified or {}).get(rel)) for rel, text in sorted(files.items()) if rel.endswith(".md")]
    if not notes:
        raise fail("path", "no markdown notes", "a basic-memory project or Obsidian vault folder of .md notes")
    by_name: dict[str, str] = {}
    for note in notes:
        for name in (note["title"], note["permalink"], PurePosixPath(note["rel"]).stem, note["rel"].removesuffix(".md")):
            by_name.setdefault(name.lower(), note["rel"])
    plan = Plan(KIND, "basic-memory")
    for note in notes:
        plan.warnings += note["warnings"]
        unresolved = []
        for target, _relation in note["links"]:
            found = by_name.get(target.lower()) or by_name.get(slug(target))
            if found and found != note["rel"]:
                plan.links.append((note["rel"], found))
            elif not found:
                unresolved.append(target)
        meta = dict(note["meta"])
        meta["basic_memory"] = {**meta.get("basic_memory", {}), "unresolved_links": unresolved} if unresolved else \
            meta.get("basic_memory", {})
        plan.records.append(Record(
            source_id=note["rel"], where=note["rel"], content=note["body"] or note["title"],
            key=note["engram"].get("key") or note["permalink"],
            type=note["type"], tags=note["tags"], metadata=meta,
            # A note engram exported is titled by the memory's key: its entity is the one it carries, if any.
            related_entity=note["engram"].get("related_entity") if note["exported"] else note["title"],
            search_context=note["engram"].get("search_context"),
            created_at=note["created"], updated_at=note["updated"], engram_id=note["engram"].get("id"),
            category=note["engram"].get("category", Category.KNOWLEDGE), importance=note["engram"].get("importance", 0.5),
            fields={"content": "", "key": " front matter permalink",
                    "related_entity": " front matter engram_related_entity" if note["exported"] else " title",
                    "search_context": " front matter engram_search_context",
                    "updated_at": " front matter modified",
                    "created_at": " file modification time" if note["dated_by_file"] else " front matter created"},
            time_in_id=not note["dated_by_file"], undated_as=note["rel"],  # dated since a date-less import: the same note
        ))
        for obs in note["observations"]:
            plan.records.append(obs)
            plan.links.append((obs.source_id, note["rel"]))
    return plan


def _note(text: str, rel: str, modified: float | None = None) -> dict[str, Any]:
    written, body_start = _front_matter(text, rel)
    front = {key: _plain(value) for key, value in written.items()}
    for name in ("title", "permalink"):  # a date or a number reads as its text; a list or a mapping is none
        if isinstance(front.get(name), list | dict):
            raise wrong_type(f"{rel} front matter {name}", front[name], "text")
    title = str(front.get("title") or PurePosixPath(rel).stem).strip()
    permalink = str(front.get("permalink") or slug(rel.removesuffix(".md")))
    created = _time(written.get("created") or written.get("date"), f"{rel} front matter created")
    updated = _time(written.get("modified") or written.get("updated"), f"{rel} front matter modified")
    dated_by_file = created is None and modified is not None
    if dated_by_file:
        created = modified
    if updated is None and modified is not None and created is not None and modified >= created:
        updated = modified  # the file was last written then: the note's last change
    extra = {k: v for k, v in front.items() if k not in ("title", "permalink", "tags", "type")}
    # engram's own export: its id, category, importance and metadata are the memory's, not the note's.
    exported = "engram_id" in extra
    places = {name: f"{rel} front matter {written}" for name, written in ENGRAM_NAMES.items()}
    carried = engram_fields({name: extra.pop(written, None) for name, written in ENGRAM_NAMES.items()},
                            f"{rel} front matter", places) if exported else {}
    keep_engram_source(extra, carried, KIND)  # kept with the note's other fields in metadata["basic_memory"]
    own = metadata(extra.pop("engram_metadata", None) or {}, f"{rel} front matter engram_metadata") if exported else {}
    note: dict[str, Any] = {
        "rel": rel, "title": title, "permalink": permalink, "created": created, "updated": updated,
        "type": type_word(front.get("type"), "note"),
        "tags": tags(_tag_list(front.get("tags"), exported), f"{rel} front matter tags"),
        "links": [], "observations": [], "relations": [], "engram": carried, "exported": exported,
        "dated_by_file": dated_by_file,
        "warnings": [],
    }
    lines = text.splitlines(keepends=True)
    fenced, body_start = _fenced(text, lines, body_start, rel) if exported else (None, body_start)
    prose: list[str] = []  # the note's own lines, each with its line ending as the file has it
    for n, raw, kind, block in _lines(lines[body_start:], body_start + 1, title, _parses_semantics(front)):
        if block is not None:
            if block.said is not None:
                note["observations"].append(_observation(block.category, block.said, rel, n, f"{rel} line {n}", created,
                                                         dated_by_file))
            if block.relation is not None:
                relation, target = block.relation[0], block.relation[1].split("|")[0].strip()
                note["links"].append((target, relation))
                note["relations"].append({"type": relation, "to": target})
            note["links"] += [(target, "links_to") for target in block.links]
        if kind == "prose":
            prose.append(raw)
    note["body"] = _content(fenced, prose)
    provenance = {"file": rel, "title": title, "permalink": permalink, **extra}
    if exported:
        # The memory's metadata as engram held it, the note's fields and relations beside it.
        if note["relations"]:
            provenance["relations"] = note["relations"]
        note["meta"] = metadata(with_provenance(own, PROVENANCE, provenance, f"{rel} front matter engram_metadata",
                                                note["warnings"]), f"{rel} front matter")
    else:
        note["meta"] = metadata({PROVENANCE: provenance, **({"relations": note["relations"]} if note["relations"] else {})},
                                f"{rel} front matter")
    return note


def reads_as(body: str, title: str) -> str | None:
    """The content the import reads from the ``body`` (the text after the front matter) of a note
    engram exported titled ``title`` (None: the import would refuse it): the exporter writes a
    memory's content as prose only when this gives it back as it is."""
    lines = body.splitlines(keepends=True)
    try:
        fenced, start = _fenced(body, lines, 0, title)
    except SnapshotError:
        return None
    return _content(fenced, [raw for _n, raw, kind, _b in _lines(lines[start:], 1, title) if kind == "prose"])


def _lines(lines: list[str], first: int, title: str, semantics: bool = True) -> Iterator[tuple[int, str, str, Block | None]]:
    """Each line (with its ending) numbered from ``first``, with what it is to the import: ``read``
    (an observation's or a relation's), a ``heading`` the import leaves out (the title heading
    repeats the title; the lists' headings head what is read apart), or ``prose``; and, on the
    first line of each paragraph or heading, the ``Block`` basic-memory reads there
    (``basic_memory_semantics``; ``semantics`` False: ``bm_parse_semantics: false``)."""
    roles, blocks = read_blocks("".join(lines), semantics)
    markdown_line, starts = 0, True  # a line str.splitlines breaks at (\x0c, \u2028, ...) is markdown's line still
    for n, raw in enumerate(lines, first):
        line = raw.splitlines()[0]  # (keepends splits where splitlines does: the same lines)
        role = roles[markdown_line]
        block = blocks.get(markdown_line) if starts else None
        if role == "read":
            kind = "read"
        elif starts and role == "heading" and (line.lstrip("#").strip() == title or (semantics and _SECTION.match(line))):
            kind = "heading"
        else:
            kind = "prose"
        yield n, raw, kind, block
        starts = raw[len(line):] in _MARKDOWN_BREAK
        markdown_line += starts


def _content(fenced: str | None, prose: list[str]) -> str:
    """A note's content: its prose as the file has it (its line endings, \r\n included, and the
    first line's indentation), without the blank lines around it, where observations left a gap
    two breaks; after engram's fenced content, when the note has it, and a blank line."""
    body = _LEADING_BLANK_LINES.sub("", _BLANK_RUN.sub(r"\1\2", "".join(prose))).rstrip()
    return body if fenced is None else fenced + ("\n\n" + body if body else "")


def _fenced(text: str, lines: list[str], start: int, rel: str) -> tuple[str | None, int]:
    """The content engram's export fenced, when the note's body (from line index ``start``) opens
    with its block, byte for byte, and the index of the line after the block (``start``: none)."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    shown = lines[at].splitlines()[0] if at < len(lines) else ""
    opening = _FENCE_OPEN.match(shown)
    if opening is None:
        return None, start
    begin = sum(len(raw) for raw in lines[: at + 1])
    fence = opening.group(1)
    # The line ending before the closing fence is the fence's, not the content's: the one the
    # opening line ends with (\n as engram writes it; \r\n in a file since turned to Windows line
    # endings), so a \r that ends the content stays its own.
    ending = re.escape(lines[at][len(shown):])
    closing = re.compile(rf"{ending}{fence}(?!`)[ \t]*(?:\r\n|\r|\n|\Z)").search(text, begin)
    if closing is None:
        raise fail(f"{rel} line {at + 1}", f"the {fence}{FENCE_INFO} block has no closing fence",
                   f"a line of {len(fence)} backticks after the content")
    return text[begin: closing.start()], len(text[: closing.end()].splitlines())


def _observation(category: str | None, text: str, rel: str, line: int, where: str, created: float | None,
                 dated_by_file: bool = False) -> Record:
    context_match = _CONTEXT.search(text)
    context = context_match.group(1) if context_match else None
    content = text[: context_match.start()] if context_match else text
    hashtags = [tag for found in _HASHTAG.findall(content) for tag in found.split("#")]
    content = _HASHTAG.sub("", content).strip() or text
    return Record(
        source_id=f"{rel}\0{category or ''}\0{content}", where=where, content=content,
        type=type_word(category, "learned"), tags=tags([*([category] if category else []), *hashtags], where),
        metadata={"basic_memory": {"file": rel, "line": line, **({"category": category} if category else {}),
                                   **({"context": context} if context else {})}},
        created_at=created, time_in_id=not dated_by_file, undated_as=rel,  # it follows its note
        fields={"content": "", "key": ""},  # where names the file and line of the observation
    )


def _parses_semantics(front: Mapping[str, Any]) -> bool:
    """Whether basic-memory reads the note's observations, relations and links: not when its front
    matter opts out with ``bm_parse_semantics: false`` (YAML's false, or the text "false" in any case)."""
    setting = front.get("bm_parse_semantics")
    return not (setting is False or (isinstance(setting, str) and setting.lower() == "false"))


def _front_matter(text: str, rel: str) -> tuple[dict[str, Any], int]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            try:
                import yaml
            except ImportError:
                raise MissingDependencyError("basic-memory front matter", "files", "pyyaml") from None
            try:
                data = yaml.load("\n".join(lines[1:i]), Loader=_loader()) or {}  # (a SafeLoader)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                at = f" line {mark.line + 2}" if mark is not None else ""
                raise fail(f"{rel}{at}", f"malformed YAML front matter: {getattr(exc, 'problem', exc)}",
                           "YAML between --- lines") from None
            if not isinstance(data, dict):
                raise fail(f"{rel} line 2", "front matter is not a mapping", "key: value lines")
            return {str(k): v for k, v in data.items()}, i + 1
    raise fail(f"{rel} line 1", "front matter has no closing ---", "YAML between --- lines")


class _Instant(datetime):
    """A front-matter time with its ``seconds`` since the epoch from every digit written: PyYAML
    keeps microseconds, and engram's export writes as many as the time it holds needs."""

    seconds: float


@cache
def _loader() -> type:
    """YAML's safe loader, its times ``_Instant`` (read only in this module: yaml is optional)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_yaml_timestamp(self, node: yaml.Node) -> date:
            value = super().construct_yaml_timestamp(node)
            if not isinstance(value, datetime):
                return value
            instant = _Instant(value.year, value.month, value.day, value.hour, value.minute, value.second,
                               value.microsecond, value.tzinfo)
            match = self.timestamp_regexp.match(node.value)
            fraction = (match.group("fraction") if match else None) or "0"
            whole = instant.replace(microsecond=0, tzinfo=instant.tzinfo or UTC).timestamp()  # no zone: UTC, as engram reads one
            instant.seconds = float(Decimal(int(whole)) + Decimal(f"0.{fraction}"))
            return instant

    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_timestamp)
    return Loader


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _tag_list(value: Any, exported: bool = False) -> Any:
    """The front matter's tags as ``tags`` reads them; a ``#`` before one is Obsidian's mark, not the
    tag's, except in a note engram exported, which writes each tag as engram holds it. What is no tag
    (a mapping, a null in the list) is left to ``tags``, which names it."""
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip().lstrip("#") for t in value.replace(",", " ").split()]
    if not isinstance(value, list):
        return value if isinstance(value, dict) else [value]
    return [t.lstrip("#") if isinstance(t, str) and not exported else t for t in value]


def _time(value: Any, where: str) -> float | None:
    if value is None:
        return None
    seconds = timestamp(_plain(value), where)  # (checks it is a time engram holds)
    return value.seconds if isinstance(value, _Instant) else seconds
