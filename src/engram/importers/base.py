"""What every importer produces: a ``Plan`` of records, validated before anything is written.

An importer reads one source format and returns a ``Plan``: memory ``Record``s (each naming where
in the source it came from, so an error can point at the line or record), links between records,
conversation messages and operator notes. ``apply.py`` writes a plan; importers never touch a
store. Every check happens while building records, so a malformed source raises ``SnapshotError``
naming the place before anything is stored: an import is all or nothing.

Records get ids derived from their source identity (``source_id``) and the agent they are imported
into: the same agent importing the same source twice finds the same ids and skips them, which is
what makes a second run a no-op, while another agent importing it gets its own copy. A record
marked ``refresh`` (a source that changes its records in place: Zep, mem0, mcp-memory-service) brings what changed to
the memory it finds instead of skipping it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.errors import SnapshotError, ValidationError
from engram.ids import derived_id
from engram.model import (
    Category,
    Memory,
    make_scope,
    parse_category,
    parse_id,
    parse_importance,
    parse_metadata,
    parse_tags,
    parse_type,
)
from engram.temporal.instants import instant

_AGENT_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]+")
# An object member named so is shown as ``.name`` in a JSON path; any other as ``["name"]``.
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True)
class Record:
    """One memory to import. ``source_id`` is unique within the source (kind included);
    ``where`` says where it came from for error messages (``line 4``, ``results[2]``)."""

    source_id: str
    where: str
    content: str
    key: str | None = None
    category: Category = Category.KNOWLEDGE
    type: str = "learned"
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    related_entity: str | None = None
    search_context: str | None = None  # engram's own (its mem0 export carries it), never a source's
    created_at: float | None = None
    updated_at: float | None = None
    last_accessed: float | None = None
    agent: str | None = None  # the source's user/agent; None means the importing agent
    session: str | None = None
    # The source field ``source_id`` comes from when the source gives it (mem0's ``id``): a second
    # record with the same one must be an identical copy. None: it is derived from the content, so a
    # repeat is the same fact again.
    id_field: str | None = None
    # Where in the record each engram field comes from, appended to ``where`` in an error:
    # ``{"content": ".memory"}`` names mem0's field; "" names the record's place alone (a markdown
    # line). A field not listed is named as engram's (``.content``).
    fields: Mapping[str, str] = field(default_factory=dict)
    # The id the record had in the engram store it was exported from (engram's own mem0 and
    # basic-memory exports carry it): held by the same agent, the record is that memory, skipped.
    engram_id: str | None = None
    # How an error names the record to a person beside its place (``the 'human' block of sam``).
    what: str | None = None
    # Valid time as the source states it (Zep's ``valid_at`` / ``invalid_at``): when the fact began
    # and stopped holding in the world. None: read from the content as ``remember`` reads it, and
    # open at the end.
    valid_from: float | None = None
    valid_until: float | None = None
    # A re-import brings the source's later changes of this record to the memory an earlier import
    # made (Zep's edges, which Zep invalidates and rewrites in place under the same uuid). False
    # (every other importer): that memory is skipped as it stands, since engram may have changed it.
    # What is brought over, and when, is ``apply._changes``'s rule.
    refresh: bool = False
    # When the source last changed the record (mem0's ``updated_at``, else ``created_at``), for a
    # ``refresh`` record whose source dates its changes: it brings them only when this is later than
    # the memory's update time (``apply.newer_than``), so an older or the same export changes
    # nothing. None (Zep, which dates no change of a record): whenever what it holds differs.
    changed_at: float | None = None
    # False when ``created_at`` is a file's modification time (a basic-memory note without dates in
    # its front matter): an edit of the file moves it, so the record's id is fixed by its source
    # identity alone, and a re-import of the edited note still finds what the first one stored.
    time_in_id: bool = True
    # A record whose source may have given it no time on an earlier import (a basic-memory note
    # whose front matter had no ``created`` then: its id held none) names the source id whose
    # date-less memory decides whether that memory is this record: its own (a note), or its note's
    # (an observation, which follows its note). ``apply._undated`` says when it is. None: never.
    undated_as: str | None = None
    # The key of the source's own metadata entry (``with_provenance``) that keeps ``source_id``
    # (sclaw's ``id``, mcp-memory-service's ``content_hash``), for a record whose id no longer holds
    # its time: a memory an earlier build imported under an id holding a creation time the source has
    # moved since is found by it (``apply._ids``), not imported a second time. None: not looked up.
    kept_as: str | None = None
    # The key of the source's own metadata entry that keeps the source's type of the record
    # (mcp-memory-service's ``memory_type``, which ``type`` is read from): a newer record whose type
    # there differs from the one the memory keeps changed its type in the source, and a re-import
    # brings the new ``type`` (``apply._changes``). None: the type is never brought by a re-import.
    type_kept_as: str | None = None
    # Metadata keys the source's layout keeps at the top of a memory's metadata (mem0's ids, where its
    # facade reads them): a memory an earlier import made without them takes them on a re-run, newer
    # or not (``apply._changes``), so what an older build imported is found as a new import is.
    placed: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A conversation message to append to engram's history (Clawless transcripts, sclaw, Letta)."""

    where: str
    conversation: str
    role: str
    content: str
    created_at: float
    metadata: Mapping[str, Any] = field(default_factory=dict)
    tool_calls: Any = None  # as ``make_message`` takes them (a list, or its JSON text)
    tool_call_id: str | None = None
    agent: str | None = None  # the source's agent whose history it joins; None means the importing agent
    # Where in the message each engram field comes from, appended to ``where`` in an error, as
    # ``Record.fields``: ``{"created_at": ".create_time"}`` (ChatGPT), ``{"content": ".bot_response",
    # "created_at": ".timestamp"}`` (Clawless). A field not listed is named as engram's (``.content``).
    fields: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HistorySummary:
    """A conversation's compaction summary (sclaw's ``summaries``, Letta's summary messages), set
    when it has none."""

    where: str
    conversation: str
    text: str
    agent: str | None = None  # the source's agent whose conversation it is; None means the importing agent


@dataclass(slots=True)
class Plan:
    """Everything one source holds, in engram's terms. ``links`` pair ``source_id``s."""

    kind: str
    source: str  # the ``source`` field of every imported memory, e.g. ``mem0``
    records: list[Record] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    history: list[HistoryEntry] = field(default_factory=list)
    summaries: list[HistorySummary] = field(default_factory=list)
    operator_notes: str | None = None
    warnings: list[str] = field(default_factory=list)  # what the source holds that is not imported, and why
    # Conversation key -> the title the source gives it (ChatGPT's and Claude.ai's conversations),
    # listed in the import's summary with what each gained.
    titles: dict[str, str] = field(default_factory=dict)
    # The key of the source's own entry in each memory's metadata (``with_provenance``), where a
    # ``refresh`` record's memory keeps what the last import brought (``apply.with_imported``): the
    # kind itself unless the source's entry is spelled otherwise (mcp-memory-service's
    # ``mcp_memory_service``, the kind being part of every record's id).
    entry: str = ""


def record_id(kind: str, source_id: str, created_at: float | None, agent: str | None = None) -> str:
    """A UUIDv7-shaped id fixed by the record's source identity and the agent it is imported into:
    the same source record imported by the same agent always gets the same id (so a second import
    skips it), another agent gets another id (so it imports its own copy), ordered by the record's
    creation time when known. Without ``agent``: the id imports before 2026-11 gave (every agent
    alike), looked up so that what they brought is still skipped."""
    return derived_id((kind, source_id) if agent is None else (kind, agent, source_id), created_at)


def fail(where: str, problem: str, allowed: str | None = None) -> SnapshotError:
    return SnapshotError(where, problem, allowed)


# A source document is JSON (or text that holds JSON): what it gave is named in its own spelling,
# never Python's ("got None", "got list"), by these two, so every importer's errors read alike.
def wrong_type(where: str, value: Any, allowed: str) -> SnapshotError:
    """The error for a value of the wrong sort at ``where``: ``got null``, ``got a list``, ``got 5
    (a number)``, ``got text`` (``jsondoc.kind``)."""
    return fail(where, f"got {jsondoc.kind(value)}", allowed)


def wrong_value(where: str, value: Any, allowed: str) -> SnapshotError:
    """The error for a value refused for what it is at ``where``, spelt as JSON spells it and cut
    short (``jsondoc.shown``): ``got "bot"``, ``got ""``, ``got null``, ``got ["a", 5]``."""
    return fail(where, f"got {jsondoc.shown(value)}", allowed)


def json_lines(text: str, prefix: str = "") -> Iterator[tuple[int, str, Mapping[str, Any]]]:
    """Each non-blank line of a JSONL source as ``(line number, where, object)``; ``where`` names
    the line (``"<prefix> line N"``) for errors. A line that is not one JSON object raises."""
    for n, line in enumerate(jsondoc.lines(text), 1):
        if not line.strip():
            continue
        where = f"{prefix} line {n}".strip()
        try:
            item = jsondoc.loads(line)
        except json.JSONDecodeError as exc:
            raise fail(where, f"malformed JSON: {exc.msg} (column {exc.colno})", "one JSON object per line") from None
        if not isinstance(item, Mapping):
            raise wrong_type(where, item, "a JSON object per line")
        yield n, where, item


def member(where: str, name: str) -> str:
    """The JSON path of the object member ``name`` inside ``where`` (``name`` alone at the top):
    ``[3].mapping.abc`` for a plain name, ``[3].mapping["a.b c"]`` for one that would read as a
    path of its own."""
    if not _PLAIN_NAME.match(name):
        return f"{where}[{json.dumps(name, ensure_ascii=False)}]"
    return f"{where}.{name}" if where else name


def a_list(value: Any, where: str, what: str = "a list") -> list[Any]:
    """``value`` when it is a list (None: an empty one); raises ``SnapshotError`` naming ``where``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(where, value, what)
    return value


def an_object(value: Any, where: str, what: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object; raises ``SnapshotError`` naming ``where`` and ``what``."""
    if not isinstance(value, Mapping):
        raise wrong_type(where, value, what)
    return value


def require_text(value: Any, where: str) -> str:
    """A name, id or type the source gives (an entity's name, a relation's end), without the
    whitespace around it. Never a record's text: that is ``content_text``."""
    if not isinstance(value, str) or not value.strip():
        raise wrong_value(where, value, "non-empty text")
    return value.strip()


def content_text(value: Any, where: str) -> str:
    """A record's or message's text as the source has it, byte for byte (whitespace at either end
    included), as ``remember`` keeps it; text that is empty or whitespace only is refused, as
    ``remember`` refuses it, naming ``where`` (the record and its field)."""
    if not isinstance(value, str):
        raise fail(where, "is missing", "text") if value is None else wrong_type(where, value, "text")
    if not value.strip():
        raise fail(where, f"must not be empty (got {jsondoc.shown(value, 40)})", "text that is not only whitespace")
    return value


def optional_text(value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise wrong_type(where, value, "text")
    return str(value)


def timestamp(value: Any, where: str) -> float | None:
    """Seconds since the epoch from a number (seconds, or milliseconds when that large) or an
    ISO 8601 text (a date alone is midnight UTC; no zone means UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise fail(where, f"{jsondoc.shown(value)} is not a time", "an ISO 8601 time or seconds since the epoch")
    if isinstance(value, int | float):
        try:
            number = float(value) / 1000 if value > 1e11 else float(value)
        except OverflowError:
            number = math.inf
        return _instant(number, value, where)
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00") if value.strip().endswith("Z") else value.strip()
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            try:
                parsed = datetime.combine(date.fromisoformat(text), datetime.min.time())
            except ValueError:
                raise fail(where, f"{jsondoc.shown(value)} is not a time",
                           "an ISO 8601 time or seconds since the epoch") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return _instant(parsed.timestamp(), value, where)
    raise wrong_type(where, value, "an ISO 8601 time or seconds since the epoch")


def _instant(number: float, value: Any, where: str) -> float:
    try:
        return instant(number, value, where)
    except ValidationError as exc:
        raise fail(where, exc.problem, exc.allowed) from None


def tags(values: Iterable[Any] | str | None, where: str) -> tuple[str, ...]:
    """Tags as engram keeps them, from a source's list (a number or boolean in it as JSON spells
    it). A list that is no list, an entry that is no text (``null``, an object: Python's spelling
    of it would become a tag), and a tag with a comma or too long are errors naming ``where``."""
    if values is None:
        return ()
    if not isinstance(values, str) and (isinstance(values, Mapping) or not isinstance(values, Iterable)):
        raise wrong_type(where, values, "a list of short tags")
    items = values if isinstance(values, str) else [_tag_text(v, f"{where}[{i}]") for i, v in enumerate(values)]
    try:
        return parse_tags(items, drop_empty=True)  # (another system's empty tag: nothing to keep)
    except ValidationError as exc:
        raise fail(where, exc.problem, exc.allowed) from None


def _tag_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return jsondoc.shown(value)
    raise wrong_type(where, value, "a tag's text")


def metadata(value: Any, where: str) -> dict[str, Any]:
    """A record's metadata: a JSON object (or its JSON text); anything else is named as JSON spells
    it (``got a list``), not by Python's type."""
    if value is not None and not isinstance(value, Mapping | str):
        raise wrong_type(where, value, "a JSON object")
    try:
        return parse_metadata(value)
    except ValidationError as exc:
        raise fail(where, exc.problem, exc.allowed) from None


def with_provenance(own: Mapping[str, Any], kind: str, provenance: Mapping[str, Any], where: str,
                    warnings: list[str]) -> dict[str, Any]:
    """The source's own metadata with engram's provenance at ``metadata[kind]``, where importers
    keep what identifies a record in its source (``metadata["sclaw"]["id"]``). A value the source
    itself holds at that key is kept inside it, as ``metadata[kind]["own"]``, and named in a
    warning: never overwritten."""
    out = dict(own)
    if kind in out:
        provenance = {**provenance, "own": out[kind]}
        warnings.append(f"{where}.metadata.{kind}: kept as metadata.{kind}.own (metadata.{kind} holds where "
                        f"the record came from in {kind})")
    out[kind] = dict(provenance)
    return out


def split_provenance(stored: Mapping[str, Any], kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The inverse of ``with_provenance``: (the source's own metadata as it had it, engram's
    provenance). Its own value at ``kind`` comes back from ``metadata[kind]["own"]``, so an
    exporter gives the source's metadata back unchanged. The caller knows the memory came from
    ``kind`` (its ``source``): a memory of another origin may hold ``metadata[kind]`` of its own."""
    own = {k: v for k, v in stored.items() if k != kind}
    provenance = dict(stored[kind]) if isinstance(stored.get(kind), Mapping) else {}
    if "own" in provenance:
        own[kind] = provenance.pop("own")
    elif kind in stored and not isinstance(stored[kind], Mapping):
        own[kind] = stored[kind]  # not engram's (provenance is always an object): the source's own
    return own, provenance


# Where a memory imported from engram's own export in a source's format (a mem0 item, a basic-memory
# note) keeps, in its provenance entry (``metadata[kind]``), the source it had in the engram it came
# from (``chat``, ``cli``, ...): its own source is now ``kind``, which tells that entry is engram's
# record of its origin, and the exporter to that format gives this one back. One key and one pair of
# rules for every such format (``keep_engram_source``, ``exported_source``).
ENGRAM_SOURCE = "engram_source"


def keep_engram_source(provenance: dict[str, Any], carried: Mapping[str, Any], kind: str) -> None:
    """Keeps at ``provenance[ENGRAM_SOURCE]`` the source engram's export carried (``carried``, from
    ``engram_fields``) when it is one other than ``kind``: a memory of ``kind`` exported and imported
    back carries ``kind`` itself, which its own source already says."""
    if carried.get("source") and carried["source"] != kind:
        provenance[ENGRAM_SOURCE] = carried["source"]


def exported_source(memory: Memory, kind: str, origin: Mapping[str, Any]) -> Any:
    """The source an export in ``kind``'s format gives ``memory`` (``origin``: its provenance entry,
    as ``split_provenance`` gives it): the one kept at ``ENGRAM_SOURCE`` when the memory came from
    ``kind`` (it came from engram's own export; None when it came from ``kind`` itself, whose own is
    never written: the record is that system's), else its own. As stored: the exporter leaves out
    what it cannot write (none, an empty one)."""
    return origin.get(ENGRAM_SOURCE) if memory.source == kind else memory.source


def engram_fields(value: Any, where: str, places: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What engram's own exports carry of a memory beside the source's fields (mem0's
    item entry ``engram``, a basic-memory note's front matter), checked: ``id``, ``key``,
    ``category``, ``type``, ``importance``, ``links`` (ids), and the texts ``related_entity``,
    ``search_context`` and ``source``, those present (the texts' bounds are checked where the
    memory is made, as ``remember`` checks them). A malformed one is
    named ``where.name``, or by its place in ``places`` when the source spells it otherwise (a
    note's front matter holds the id as ``engram_id``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise wrong_type(where, value, "engram's fields as an object")

    def place(name: str) -> str:
        return (places or {}).get(name, f"{where}.{name}")

    out: dict[str, Any] = {}
    for name in ("id", "key", "type", "related_entity", "search_context", "source"):
        if value.get(name) is not None:
            out[name] = optional_text(value[name], place(name))
    links = value.get("links")
    if links is not None:
        if not isinstance(links, list) or not all(isinstance(link, str) for link in links):
            raise wrong_value(place("links"), links, "a list of engram ids")
        out["links"] = links
    try:
        if out.get("id"):  # the memory's id when it comes back: one no door or memory file could name is refused
            out["id"] = parse_id(out["id"])
        if value.get("category") is not None:
            out["category"] = parse_category(value["category"])
        if value.get("importance") is not None:
            if isinstance(value["importance"], bool) or not isinstance(value["importance"], int | float):
                raise ValidationError("importance", f"got {jsondoc.shown(value['importance'])}", "a number from 0 to 1")
            out["importance"] = parse_importance(value["importance"])
        if out.get("type"):
            out["type"] = parse_type(out["type"])
    except ValidationError as exc:
        raise fail(place(exc.field), exc.problem, exc.allowed) from None
    return out


def type_word(value: Any, default: str) -> str:
    """A source's type as an engram type word, or ``default`` when it cannot be one."""
    if not isinstance(value, str):
        return default
    try:
        return parse_type(re.sub(r"[^a-z0-9_-]+", "-", value.strip().lower()).strip("-")[:40] or default)
    except ValidationError:
        return default


def agent_name(value: Any, where: str, fallback: str = "user") -> str | None:
    """A source's user, agent or run id as an engram agent (or session) name, one name per id:
    an id that already is a valid name is kept as it is; any other gets its usable characters
    (others become ``-``) and 8 hex digits of the SHA-256 of the whole id (``José`` becomes
    ``Jos-…``, ``user 1`` ``user-1-…``, apart from a source's ``user-1``), or ``fallback`` and
    the digits when none is usable (``张伟`` becomes ``user-…``). The same id always maps to the
    same name, so a re-import finds what the first one stored."""
    text = optional_text(value, where)
    if text is None:
        return None
    try:
        return make_scope(text, None).agent
    except ValidationError:
        pass
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    usable = re.sub(r"^[^A-Za-z0-9]+", "", _AGENT_UNSAFE.sub("-", text)).rstrip("-.:@")[:100]
    return f"{usable or fallback}-{digest}"


def without_bom(text: str) -> str:
    """``text`` without the byte-order mark Windows tools put before a UTF-8 document."""
    return text[1:] if text.startswith("\ufeff") else text


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:120] or "note"


Files = dict[str, str]
"""A folder source as ``{relative/posix/path: text}``: read from disk by the CLI and library, sent
as JSON by an HTTP client, so the folder importers never touch the file system themselves."""


def modified_times(folder: Path, files: Files) -> dict[str, float]:
    """The modification time of each file of ``files`` read from ``folder``: the only date a
    markdown note without dates in its front matter carries (basic-memory dates its notes so)."""
    times: dict[str, float] = {}
    for rel in files:
        try:
            times[rel] = (folder / rel).stat().st_mtime
        except OSError:
            continue  # (read a moment ago: gone since, it is dated by the import)
    return times


def read_folder(folder: Path, suffixes: tuple[str, ...] = (".md", ".jsonl")) -> Files:
    """Every text file with one of ``suffixes`` under ``folder`` (hidden folders skipped), as its
    bytes say: a Windows file's ``\r\n`` line endings are kept (read as text, Python would turn
    them into ``\n`` before any importer saw them); a leading byte-order mark is dropped."""
    if not folder.is_dir():
        raise fail("path", f"{folder} is not a folder", "a folder")
    files: Files = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or path.suffix not in suffixes or any(p.startswith(".") for p in rel.parts):
            continue
        try:
            files[rel.as_posix()] = path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise fail(rel.as_posix(), f"cannot read: {exc}", "a UTF-8 text file") from None
    return files
