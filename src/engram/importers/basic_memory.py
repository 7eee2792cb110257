"""basic-memory (and Obsidian vaults written its way): a folder of markdown notes.

A note: YAML front matter (``title``, ``type``, ``tags``, ``permalink``, any other field), prose,
observations ``- [category] text #tag (context)`` and relations ``- relation_type [[Target]]``;
``[[Target]]`` anywhere in the prose is a wiki-link. Mapping: each note is one memory (its prose,
or its title when it has none), keyed by its permalink, tagged with its front-matter tags, with the
other front-matter fields in ``metadata["basic_memory"]``; each observation is one memory of its
own (the category as its type and first tag, its ``#tags`` as tags, the context in metadata) linked
to its note; each relation and wiki-link links the two notes (the relation's type is kept in
``metadata["relations"]``). basic-memory writes no dates in a note (it dates a note by its file): a
note without ``created``/``date`` (``modified``/``updated``) in its front matter is dated by its
file's modification time when the folder is read from disk, its observations with it. A link to a
note the folder does not hold is kept in metadata only. Task checkboxes (``- [ ]``, ``- [x]``) are
prose, as basic-memory treats them. A note engram exported (``engram_id`` in its front matter) gets
its category and importance back, and is skipped when the importing agent holds that id (it is that
memory).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import PurePosixPath
from typing import Any

from engram.errors import MissingDependencyError
from engram.importers.base import (
    Files,
    Plan,
    Record,
    engram_fields,
    fail,
    metadata,
    slug,
    tags,
    timestamp,
    type_word,
)
from engram.model import Category

KIND = "basic-memory"
_OBSERVATION = re.compile(r"^\s*[-*]\s+\[([^\]\s][^\]]*)\]\s+(.+?)\s*$")
_RELATION = re.compile(r"^\s*[-*]\s+([A-Za-z_][\w -]*?)\s+\[\[([^\]]+)\]\]\s*(?:\((.*)\))?\s*$")
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
_HASHTAG = re.compile(r"(?:^|\s)#([\w/-]+)")
_CONTEXT = re.compile(r"\s*\(([^()]*)\)\s*$")
_TASK = re.compile(r"^[ xX-]$")
_SECTION = re.compile(r"^#+\s*(Observations|Relations)\s*$")  # basic-memory's headings of its lists
_BREAK = r"(?:\r\n|\r(?!\n)|\n)"  # one line ending: a \r\n is one, never a \r and a \n
_BLANK_RUN = re.compile(rf"({_BREAK})({_BREAK}){_BREAK}+")
_LEADING_BLANK_LINES = re.compile(rf"^(?:[ \t]*{_BREAK})+")


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
            source_id=note["rel"], where=note["rel"], content=note["body"] or note["title"], key=note["permalink"],
            type=note["type"], tags=note["tags"], metadata=meta, related_entity=note["title"],
            created_at=note["created"], updated_at=note["updated"], engram_id=note["engram"].get("id"),
            category=note["engram"].get("category", Category.KNOWLEDGE), importance=note["engram"].get("importance", 0.5),
            fields={"content": "", "key": " front matter permalink"}, time_in_id=not note["dated_by_file"],
        ))
        for obs in note["observations"]:
            plan.records.append(obs)
            plan.links.append((obs.source_id, note["rel"]))
    return plan


def _note(text: str, rel: str, modified: float | None = None) -> dict[str, Any]:
    front, body_start = _front_matter(text, rel)
    title = str(front.get("title") or PurePosixPath(rel).stem).strip()
    permalink = str(front.get("permalink") or slug(rel.removesuffix(".md")))
    created = _time(front.get("created") or front.get("date"), f"{rel} front matter created")
    updated = _time(front.get("modified") or front.get("updated"), f"{rel} front matter modified")
    dated_by_file = created is None and modified is not None
    if dated_by_file:
        created = modified
    if updated is None and modified is not None and created is not None and modified >= created:
        updated = modified  # the file was last written then: the note's last change
    extra = {k: v for k, v in front.items() if k not in ("title", "permalink", "tags", "type")}
    # engram's own export: its id, category and importance are engram's fields, not the note's.
    carried = engram_fields({"id": extra.pop("engram_id"), "category": extra.pop("category", None),
                             "importance": extra.pop("importance", None)}, f"{rel} front matter") \
        if "engram_id" in extra else {}
    note: dict[str, Any] = {
        "rel": rel, "title": title, "permalink": permalink, "created": created, "updated": updated,
        "type": type_word(front.get("type"), "note"), "tags": tags(_tag_list(front.get("tags")), f"{rel} front matter tags"),
        "links": [], "observations": [], "relations": [], "engram": carried, "dated_by_file": dated_by_file,
    }
    prose: list[str] = []  # the note's own lines, each with its line ending as the file has it
    lines = text.splitlines(keepends=True)
    for n, raw in enumerate(lines[body_start:], body_start + 1):
        line = raw.splitlines()[0]  # (keepends splits where splitlines does: the same lines)
        where = f"{rel} line {n}"
        obs = _OBSERVATION.match(line)
        rel_match = _RELATION.match(line)
        if obs and not _TASK.match(obs.group(1)):
            note["observations"].append(_observation(obs.group(1), obs.group(2), rel, n, where, created,
                                                     dated_by_file))
            note["links"] += [(t.strip(), "mentions") for t in _WIKI.findall(obs.group(2))]
        elif rel_match:
            relation, target = rel_match.group(1).strip(), rel_match.group(2).split("|")[0].strip()
            note["links"].append((target, relation))
            note["relations"].append({"type": relation, "to": target})
        else:
            # The title heading repeats the title, and the lists' headings head what is read apart.
            if not (line.startswith("#") and line.lstrip("#").strip() == title) and not _SECTION.match(line):
                prose.append(raw)
            note["links"] += [(t.strip(), "links_to") for t in _WIKI.findall(line)]
    # The prose as the file has it (its line endings, \r\n included, and the first line's
    # indentation), without the blank lines around it; where observations left a gap, two breaks.
    body = _BLANK_RUN.sub(r"\1\2", "".join(prose))
    note["body"] = _LEADING_BLANK_LINES.sub("", body).rstrip()
    note["meta"] = metadata({"basic_memory": {"file": rel, "title": title, "permalink": permalink, **extra},
                             **({"relations": note["relations"]} if note["relations"] else {})},
                            f"{rel} front matter")
    return note


def _observation(category: str, text: str, rel: str, line: int, where: str, created: float | None,
                 dated_by_file: bool = False) -> Record:
    context_match = _CONTEXT.search(text)
    context = context_match.group(1) if context_match else None
    content = text[: context_match.start()] if context_match else text
    hashtags = _HASHTAG.findall(content)
    content = _HASHTAG.sub("", content).strip() or text
    return Record(
        source_id=f"{rel}\0{category}\0{content}", where=where, content=content,
        type=type_word(category, "learned"), tags=tags([category, *hashtags], where),
        metadata={"basic_memory": {"file": rel, "line": line, "category": category,
                                   **({"context": context} if context else {})}},
        created_at=created, time_in_id=not dated_by_file,
        fields={"content": "", "key": ""},  # where names the file and line of the observation
    )


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
                data = yaml.safe_load("\n".join(lines[1:i])) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                at = f" line {mark.line + 2}" if mark is not None else ""
                raise fail(f"{rel}{at}", f"malformed YAML front matter: {getattr(exc, 'problem', exc)}",
                           "YAML between --- lines") from None
            if not isinstance(data, dict):
                raise fail(f"{rel} line 2", "front matter is not a mapping", "key: value lines")
            return {str(k): _plain(v) for k, v in data.items()}, i + 1
    raise fail(f"{rel} line 1", "front matter has no closing ---", "YAML between --- lines")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _tag_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t.strip().lstrip("#") for t in value.replace(",", " ").split()]
    return [str(t).lstrip("#") for t in value] if isinstance(value, list) else [str(value)]


def _time(value: Any, where: str) -> float | None:
    return timestamp(_plain(value), where) if value is not None else None
