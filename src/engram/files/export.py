"""Exports and imports of memory folders.

Per-type JSON files (PHP entity): every memory as ``<type>/YYYY-MM-DD_HH-ii-ss_<id>.json``
holding the fields that document shows (id, type, content, importance, context, created_at),
plus an ``engram`` object with the rest so a folder of them can be imported back unchanged.
Kept up to date inside the memory folder (``types/``) when ``files.type_json`` is on, and
written to any folder by ``engram export --format json DIR``.

``export_folder`` writes memories as a memory folder (markdown, YAML or per-type JSON): the whole
store, or what one agent reads (``root.folder_export_memories`` chooses);
``import_folder`` reads one back (any of the three), keeping ids, keys and times; entries
without ids are stored as new memories. Invalid entries are reported with file and line and the
rest is imported.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import jsondoc, snapshot
from engram.errors import EngramError, ValidationError
from engram.model import Memory, Scope, make_scope, parse_content, parse_search_context
from engram.text import counted

from . import layout, own_folder, split
from .document import Document, get_format
from .entry import Entry, Problem, build_entry, from_memory, store_entry, utc
from .paths import Folder, PathRefused
from .state import SyncState, recorded_session_owner

if TYPE_CHECKING:
    from engram.engine import Engram


# --- per-type JSON ---------------------------------------------------------------------------
def type_file(memory: Memory, base: str = layout.TYPES_DIR) -> str:
    stamp = utc(memory.created_at).strftime("%Y-%m-%d_%H-%M-%S")
    name = f"{layout.slug(memory.type)}/{stamp}_{memory.id}.json"
    return f"{base}/{name}" if base else name


def type_record(memory: Memory) -> dict[str, Any]:
    """The PHP entity's JSON fields, then engram's own under ``engram``."""
    return {
        "id": memory.id,
        "type": memory.type,
        "content": memory.content,
        "importance": memory.importance,
        "context": dict(memory.metadata),
        "created_at": utc(memory.created_at).isoformat(timespec="seconds"),
        "engram": {
            "key": memory.key, "category": memory.category.value, "layer": memory.layer.value,
            "tags": list(memory.tags), "related_entity": memory.related_entity, "source": memory.source,
            "scope": str(memory.scope), "created_at": memory.created_at, "updated_at": memory.updated_at,
            "last_accessed": memory.last_accessed, "recall_count": memory.recall_count,
            "links": list(memory.links), "superseded_by": memory.superseded_by,
            "search_context": memory.search_context, "valid_from": memory.valid_from,
            "valid_until": memory.valid_until, "superseded_at": memory.superseded_at,
        },
    }


def looks_like_type_record(data: Any) -> bool:
    """Whether a JSON document is one per-type file's memory (the PHP entity's
    ``storage/entity/memory/<type>/<time>_<id>.json``, or engram's copy of one): an object with its
    ``content`` and ``type``, and either engram's ``engram`` object or the PHP entity's ISO
    ``created_at`` without engram's own ``key`` and ``metadata``: a memory as engram's snapshot
    writes one (``Memory.to_dict``, epoch times) is no such file, and read as one it lost its key,
    tags and metadata."""
    if not (isinstance(data, dict) and isinstance(data.get("content"), str) and isinstance(data.get("type"), str)):
        return False
    if isinstance(data.get("engram"), dict):
        return True
    return isinstance(data.get("created_at"), str) and "key" not in data and "metadata" not in data


def _type_files_by_id(folder: Folder, base: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for rel, is_link in folder.walk(base) if _isdir(folder, base) else ():
        if not is_link and rel.endswith(".json"):
            found[rel.rsplit("_", 1)[-1][: -len(".json")]].append(rel)
    return found


def _isdir(folder: Folder, rel: str) -> bool:
    try:
        return not rel or folder.resolve(rel).is_dir()
    except PathRefused:
        return False


# Memories per progress report of a per-type JSON export (one file each).
_REPORT_EVERY = 200


def write_type_files(folder: Folder, memories: Sequence[Memory], base: str = layout.TYPES_DIR,
                     existing: dict[str, list[str]] | None = None,
                     progress: Callable[[int, int], None] | None = None,
                     held: dict[str, str | None] | None = None) -> int:
    """Write (or move, when the type changed) each memory's JSON file; returns how many were
    written. ``progress(done, total)`` every 200 memories and at the end. ``held``: files' texts
    the caller has just read (None: unreadable), not read again."""
    existing = _type_files_by_id(folder, base) if existing is None else existing
    written = 0
    for n, memory in enumerate(memories, 1):
        rel = type_file(memory, base)
        for old in existing.get(memory.id, []):
            if old != rel:
                folder.remove(old)
        text = json.dumps(type_record(memory), ensure_ascii=False, indent=4) + "\n"
        if held is not None and rel in held:
            same = held[rel] == text
        else:
            try:
                same = folder.read_text(rel) == text
            except (FileNotFoundError, PathRefused):
                same = False
        if not same:
            folder.write_text(rel, text)
            written += 1
        if progress and (n % _REPORT_EVERY == 0 or n == len(memories)):
            progress(n, len(memories))
    return written


def remove_type_files(folder: Folder, memories: Iterable[Memory], base: str = layout.TYPES_DIR) -> None:
    existing = None
    for memory in memories:
        if not folder.remove(type_file(memory, base)):
            existing = existing if existing is not None else _type_files_by_id(folder, base)
            for old in existing.get(memory.id, []):
                folder.remove(old)


def sync_type_dir(folder: Folder, memories: Sequence[Memory], base: str = layout.TYPES_DIR,
                  owns: Callable[[Scope], bool] | None = None) -> int:
    """Make ``base`` hold exactly one JSON file per memory. ``owns``: the scopes ``memories`` are
    all of (an agent's own database): a file of another scope is left to its database, and one
    whose scope cannot be read is left alone.

    The files are write-only copies (as the PHP entity's own): none is read back. Returns how many
    were changed by hand (``_hand_changed``): an edited copy is rewritten from the database, and a
    file engram never wrote (no ``engram`` object, or no JSON) is left where it is, so the caller
    can say once that they are not read."""
    existing = _type_files_by_id(folder, base)
    alive = {m.id: m for m in memories}
    # Each file read once, before the pass rewrites any: what it held decides both questions.
    held = {rel: _read_text(folder, rel) for rels in existing.values() for rel in rels}
    data = {rel: _json_of(text) for rel, text in held.items()}
    by_hand = sum(_hand_changed(data[rel], alive.get(memory_id)) for memory_id, rels in existing.items() for rel in rels)
    write_type_files(folder, memories, base, existing, held=held)
    for memory_id, rels in existing.items():
        if memory_id not in alive:
            for rel in rels:
                if (owns is None or _scope_owned(folder, rel, owns)) and _engram_wrote(data[rel]):
                    folder.remove(rel)
    return by_hand


# The PHP entity's fields of a per-type file: what someone editing one by hand would change.
_PHP_FIELDS = ("id", "type", "content", "importance", "context", "created_at")


def _read_text(folder: Folder, rel: str) -> str | None:
    try:
        return folder.read_text(rel)
    except (OSError, ValueError, PathRefused):  # (ValueError: not UTF-8)
        return None


def _json_of(text: str | None) -> Any:
    try:
        return None if text is None else json.loads(text)
    except ValueError:
        return None


def _engram_wrote(data: Any) -> bool:
    """Whether a file's JSON (``data``, None when unreadable) is one engram wrote: with its ``engram`` object."""
    return isinstance(data, dict) and isinstance(data.get("engram"), dict)


def _hand_changed(data: Any, memory: Memory | None) -> bool:
    """Whether a file holding ``data`` (its JSON, None when unreadable) was changed since engram
    wrote it: a file engram never wrote, or a copy of
    ``memory`` as it is now (its ``engram`` object as engram writes it) whose PHP fields differ. A
    copy of an older state differs because the memory changed, not the file (recall strengthening
    changes importance and bookkeeping, unwritten until the next pass); a forgotten memory's
    file is engram's to remove."""
    if not _engram_wrote(data):
        return True
    if memory is None:
        return False
    record = json.loads(json.dumps(type_record(memory), ensure_ascii=False))
    return data["engram"] == record["engram"] and any(data.get(name) != record[name] for name in _PHP_FIELDS)


def _scope_owned(folder: Folder, rel: str, owns: Callable[[Scope], bool]) -> bool:
    try:
        return owns(Scope.parse(json.loads(folder.read_text(rel))["engram"]["scope"]))
    except (OSError, ValueError, KeyError, TypeError, EngramError):
        return False


# --- whole folders ---------------------------------------------------------------------------
@dataclass(frozen=True)
class FolderExport:
    """What ``export_folder`` did: how many memories it wrote, and the files that hold them (each
    one the export left as it wants it, rewritten or already holding that text)."""

    memories: int
    files: tuple[Path, ...]


def export_folder(memories: Iterable[Memory], dest: Path, *, format: str, group_by: layout.GroupBy = "tag",
                  max_file_bytes: int = 5_000_000, databases: Mapping[str, Iterable[Memory]] | None = None,
                  synced: Path | None = None, progress: Callable[[int, int], None] | None = None) -> FolderExport:
    """Write ``memories`` into ``dest`` as a memory folder, no file over ``max_file_bytes`` (split
    into ``-2``, ``-3``… files as sync does); returns how many were written and their files (what
    a caller records as written on request: ``wiring.note_written_on_request``). ``databases``:
    the memories of other agents' own databases (``per_agent_databases``), by agent, written too,
    the global ones under ``databases/<agent>/`` (``layout``), so none meets another database's
    global memory of the same key in one file and an import puts each back in its database.
    ``progress(done, total)`` counts the memories written as per-type JSON, a file each, and in
    markdown and YAML those whose place is settled: a file that fits the limit all at once, one split
    to fit it as its entries are kept and moved (``split.fit``'s ``settled``), so the one file of an
    export whose memories share a tag does not go from none to all. Raises
    ``PathRefused`` when a path inside ``dest`` is a symlink, ``ValidationError`` when a memory
    cannot fit any file, and ``ValidationError`` naming ``path``, before anything is written, when
    ``dest`` is the memory folder engram syncs (``synced``: ``files.dir`` while ``files.enabled``)
    or a folder inside it (``own_folder.refuse_export``)."""
    own_folder.refuse_export(dest, synced)
    folder = Folder(dest, max_file_bytes=max_file_bytes)
    # Each memory with the folder its global scope's files go under ("": the folder's own global/).
    placed = [("", memory) for memory in memories]
    for agent, held in (databases or {}).items():
        placed += [(layout.database_dir(agent) if memory.scope.agent is None else "", memory) for memory in held]
    if format == "json":
        by_base: dict[str, list[Memory]] = defaultdict(list)
        for base, memory in placed:
            by_base[base].append(memory)
        done = 0
        for base, held in by_base.items():
            # Counted over every memory, not each folder's.
            report = None if progress is None else (lambda n, _of, before=done: progress(before + n, len(placed)))
            write_type_files(folder, held, base=base, progress=report)
            done += len(held)
        return FolderExport(len(placed), tuple(folder.resolve(type_file(m, base)) for base, m in placed))
    fmt = get_format(format)
    docs: dict[str, Document] = {}
    held: dict[str, list[Entry]] = defaultdict(list)  # each file's entries, in order: ``split.fit`` need not parse it
    for base, memory in sorted(placed, key=lambda placing: (placing[1].created_at, placing[1].id, placing[0])):
        rel = layout.Layout().file_for(memory, group_by, fmt.suffix)
        rel = f"{base}/{rel}" if base else rel
        if rel not in docs:
            docs[rel] = fmt.new(layout.title(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
        entry = from_memory(memory)
        docs[rel].add(entry)
        held[rel].append(entry)
    def new_doc(rel: str) -> Document:
        return fmt.new(layout.title(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]))

    problems: list[Problem] = []
    done = 0

    def settled(n: int) -> None:  # the long part: each file rendered and split to fit
        nonlocal done
        done += n
        if progress is not None:
            progress(done, len(placed))

    touched: set[str] = set()  # files a split has moved entries into: they hold more than ``held``
    for rel in sorted(docs):
        if rel not in held:
            continue  # a continuation file: filled by the split of the file it continues
        before = done
        touched |= split.fit(rel, docs, lambda target: docs.setdefault(target, new_doc(target)), fmt,
                             limit=max_file_bytes, max_content_chars=1 << 30, st=SyncState(fmt.name, ""),
                             problems=problems, entries=None if rel in touched else held[rel], settled=settled)
        if done == before:  # it fitted as it was: all at once
            settled(len(held[rel]))
    if problems:
        raise ValidationError("max_file_bytes", "; ".join(p.message for p in problems), "a limit every memory fits")
    files: list[Path] = []
    for rel, doc in docs.items():
        if doc.text() == new_doc(rel).text():
            continue  # a continuation file that took nothing
        folder.write_text(rel, doc.text())
        files.append(folder.resolve(rel))
    return FolderExport(len(placed), tuple(files))


@dataclass
class ImportSummary:
    files: int = 0
    imported: int = 0  # kept their ids
    created: int = 0  # had no id: stored as new memories
    skipped: int = 0  # id or key already present
    problems: list[Problem] = field(default_factory=list)


def import_folder(
    engram: Engram,
    src: Path,
    *,
    max_file_bytes: int = 5_000_000,
    session_folders: layout.SessionFolders = "agent/session",
    synced: Path | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ImportSummary:
    """Import every memory file under ``src`` (markdown, YAML, or per-type JSON files), its
    sessions laid out as ``session_folders`` says (``files.session_folders``: ClawCode's
    ``sessions/<session>/`` belong to the agent the folder records, else the importing one). A
    memory-looking file that is not read (at another level, in a folder of no scope) is reported
    in ``problems`` with the reason. Raises ``ValidationError`` naming ``path`` when it is not a
    folder, holds no memory file (an empty or mistyped folder), or is the memory folder engram
    syncs (``synced``: ``files.dir`` while ``files.enabled``), a folder inside it or one holding it.
    ``src`` may also be one per-type JSON file (a PHP entity's ``<type>/<time>_<id>.json``): its
    memory is imported as the folder's would be."""
    if src.is_file() and src.suffix.lower() == ".json":
        return _import_type_file(engram, src, max_file_bytes, synced)
    if not src.is_dir():
        raise ValidationError("path", f"{src} is not a folder", "a memory folder (global/, agents/, sessions/ or <type>/)")
    own_folder.refuse_import(src, synced)
    folder = Folder(src, max_file_bytes=max_file_bytes)
    summary = ImportSummary()
    # Read, never recorded: an import leaves the source folder as it found it.
    owner = recorded_session_owner(folder) or engram.scope.agent or "default"
    where = layout.Layout(session_folders, owner)
    candidates = [(rel, link) for rel, link in folder.walk()]
    # By scope and the agent whose own database the entries go to (None: as their scope says).
    by_scope: dict[tuple[Scope, str | None], list[tuple[str, Entry]]] = defaultdict(list)
    for n, (rel, is_link) in enumerate(candidates, start=1):
        if progress:
            progress(n, len(candidates), rel)
        if is_link:
            summary.problems.append(Problem(rel, 0, "is a symlink; symlinks are never followed, not read"))
            continue
        try:
            read = _read_file(folder, rel, engram, summary, where)
        except (PathRefused, ValidationError, OSError) as exc:
            summary.problems.append(Problem(rel, 0, f"not read: {exc}"))
            continue
        if read is not None:
            summary.files += 1
            for scope, database, entry in read:
                # Into one database, every agent's global memories are one scope (a key they repeat, reported).
                by_scope[scope, database if engram.agent_databases is not None else None].append((rel, entry))
    if not summary.files:
        # With the files it did not read and why (a MEMORY.md in an agent's folder), else unsaid.
        why = "".join(f"; {p}" for p in summary.problems[:5]) + ("; ..." if len(summary.problems) > 5 else "")
        raise ValidationError("path", f"{src} holds no memory files engram can read{why}",
                              "a memory folder (global/, agents/, sessions/ or <type>/ files), "
                              "or another system's data with --from KIND")
    _store(engram, by_scope, summary)
    return summary


def _import_type_file(engram: Engram, src: Path, max_file_bytes: int, synced: Path | None) -> ImportSummary:
    """One per-type JSON file, read as ``import_folder`` reads it in its ``<type>/`` folder."""
    own_folder.refuse_import(src, synced)
    summary = ImportSummary(files=1)
    folder = Folder(src.parent, max_file_bytes=max_file_bytes, create=False)
    entries = _read_type_json(folder, src.name, engram, summary)
    if not entries:  # (malformed, or not a memory: said by the problem, and nothing imported)
        raise ValidationError("path", f"{src} holds no memory engram can read; {summary.problems[0].message}",
                              "a per-type JSON file of one memory, or a memory folder")
    _store(engram, {(scope, None): [(src.name, entry)] for scope, entry in entries}, summary)
    return summary


def _read_file(folder: Folder, rel: str, engram: Engram, summary: ImportSummary,
               scopes: layout.Layout) -> list[tuple[Scope, str | None, Entry]] | None:
    """The file's entries, each with its scope and the agent whose own database it goes to (None:
    as its scope says; an agent's for a global memory under ``databases/<agent>/``)."""
    in_database = layout.in_database_dir(rel)
    if in_database is None:
        read = _read_scoped_file(folder, rel, rel, engram, summary, scopes)
        return None if read is None else [(scope, None, entry) for scope, entry in read]
    agent, inner = in_database
    make_scope(agent, None)  # (a folder name that stands for no agent: refused, naming what is allowed)
    read = _read_scoped_file(folder, rel, inner, engram, summary, scopes)
    if read is None:
        return None
    kept = [(scope, agent, entry) for scope, entry in read if scope.agent is None]
    if len(kept) < len(read):
        summary.problems.append(Problem(rel, 0, f"{counted(len(read) - len(kept), 'entry')} not imported: "
                                        f"{layout.DATABASES_DIR}/<agent>/ holds an agent database's global memories only"))
    return kept


def _read_scoped_file(folder: Folder, rel: str, inner: str, engram: Engram, summary: ImportSummary,
                      scopes: layout.Layout) -> list[tuple[Scope, Entry]] | None:
    """The entries of the file ``rel``, placed as ``inner`` (its path, or its path inside
    ``databases/<agent>/``) says, with their scopes."""
    name = rel.rsplit("/", 1)[-1]
    if rel.endswith(".conflict"):
        return None
    # A MEMORY.md goes on to ``locate``, which reads none, and ``misplaced``, which says why: skipped
    # unsaid, its facts were missing from the import with no word of it.
    for fmt_name, suffixes in (("markdown", (".md",)), ("yaml", (".yaml", ".yml"))):
        if name.endswith(suffixes):
            suffix = "." + name.rsplit(".", 1)[-1]
            where = scopes.locate(inner, suffix)
            if where is None:
                why = scopes.misplaced(inner, suffix)
                if why:
                    summary.problems.append(Problem(rel, 0, f"not read: {why}"))
                return None
            doc = get_format(fmt_name).parse(folder.read_text(rel), rel, max_content_chars=engram.max_content_chars)
            summary.problems.extend(doc.parsed.problems)
            return [(where[0], entry) for entry in doc.parsed.entries]
    if name.endswith(".json") and "/" in inner:
        return _read_type_json(folder, rel, engram, summary)
    return None


def _read_type_json(folder: Folder, rel: str, engram: Engram, summary: ImportSummary) -> list[tuple[Scope, Entry]]:
    try:
        data = json.loads(folder.read_text(rel))
    except json.JSONDecodeError as exc:
        summary.problems.append(Problem(rel, exc.lineno, f"malformed JSON: {exc.msg}"))
        return []
    if not isinstance(data, dict):
        summary.problems.append(Problem(rel, 1, "expected a JSON object"))
        return []
    extra = data.get("engram") if isinstance(data.get("engram"), dict) else {}
    context = data.get("context")
    raw = {**{k: v for k, v in extra.items() if k != "scope"}, "id": str(data["id"]) if data.get("id") is not None else None,
           "type": data.get("type"), "content": data.get("content", ""), "importance": data.get("importance", 0.5),
           # PHP's json_encode writes an empty array as ``[]``: a memory saved without context.
           "metadata": None if context == [] else context, "date": data.get("created_at")}
    try:
        if raw["metadata"] is not None and not isinstance(raw["metadata"], dict | str):
            raise ValidationError("context", f"got {jsondoc.kind(context)}", "a JSON object, or [] or null for none")
        scope = Scope.parse(extra["scope"]) if extra.get("scope") else Scope(engram.scope.agent)
        return [(scope, build_entry(raw, max_content_chars=engram.max_content_chars, line=1))]
    except ValidationError as exc:
        # Named as the file names them: the PHP entity's ``context`` and ``created_at``.
        field = _TYPE_JSON_FIELDS.get(exc.field, exc.field)
        summary.problems.append(Problem(rel, 1, f"entry not imported: {field}: {exc.reason}"))
        return []


# The per-type file's names for what ``build_entry`` reads under its own.
_TYPE_JSON_FIELDS = {"metadata": "context", "date": "created_at"}


def _store(engram: Engram, by_scope: dict[tuple[Scope, str | None], list[tuple[str, Entry]]],
           summary: ImportSummary) -> None:
    """Entries with ids are imported (one all-or-nothing snapshot per agent, so links between them
    hold); entries without are remembered. An entry repeating an earlier one's id (or its key in
    its scope) is not imported: an identical copy counts as skipped, one that differs is reported
    with both places (the store keeps one memory per id, and dropped the other unsaid). A global
    memory named an agent's database (``databases/<agent>/``) goes with that agent's memories."""
    now = engram.clock()
    per_agent: dict[str | None, list[tuple[str, Entry, Memory]]] = defaultdict(list)
    for (scope, database), entries in by_scope.items():
        for rel, entry in entries:
            if entry.id:
                # Screened here, where each warning can name its file and line (import_snapshot
                # screens again: what is redacted is not found again, and its warnings go unsaid).
                try:
                    memory, found = engram.privacy.screen_memory(entry.to_memory(scope, now, engram.privacy))
                    # A marker may be longer than what it replaced (``a@b.io``): content read within
                    # the limit can pass it once redacted. Refused here by its file and line, where the
                    # user can shorten it, not by the snapshot's name for it (``memories[3].content``).
                    parse_content(memory.content, engram.max_content_chars)
                    parse_search_context(memory.search_context, engram.max_content_chars)
                except ValidationError as exc:
                    summary.problems.append(Problem(rel, entry.line, f"entry not imported: once PII was redacted, {exc}"))
                    continue
                notes = [*found, *filter(None, [entry.times(now)[2]])]  # (created later than updated: the earlier kept)
                summary.problems.extend(Problem(rel, entry.line, f"warning: {warning}", skipped=False) for warning in notes)
                per_agent[database or scope.agent].append((rel, entry, memory))
    # Global memories go with the importing agent's own (first, as other agents' may link to them):
    # with one database per agent, that agent's database is where they belong.
    own = engram.scope.agent
    groups = [(own, per_agent.pop(None, []) + per_agent.pop(own, [])), *per_agent.items()]
    for agent, placed in groups:
        memories = [memory for _, _, memory in placed]
        repeated = snapshot.repeats(memories)
        for i, earlier in repeated.items():
            if memories[i] == memories[earlier]:
                summary.skipped += 1
                continue
            rel, entry, memory = placed[i]
            first_rel, first_entry, _ = placed[earlier]
            same_id = memory.id == memories[earlier].id
            what = f"id {memory.id}" if same_id else f"key {jsondoc.shown(memory.key)} in {memory.scope}"
            summary.problems.append(Problem(rel, entry.line, f"entry not imported: its {what} repeats "
                                            f"{first_rel}:{first_entry.line}, which differs"))
        memories = [memory for i, memory in enumerate(memories) if i not in repeated]
        if memories:
            result = engram.for_agent(agent or "default").import_snapshot(snapshot.dump(memories))
            summary.imported += result.imported
            summary.skipped += result.skipped
    for (scope, database), entries in by_scope.items():
        view = engram.for_agent(database or scope.agent or engram.scope.agent or "default", scope.session)
        for rel, entry in entries:
            if entry.id:
                continue
            try:
                result = store_entry(view, entry, scope)
            except EngramError as exc:
                summary.problems.append(Problem(rel, entry.line, f"entry not imported: {exc}"))
                continue
            retimed = [entry.times(now)[2]] if result.action == "created" else []
            summary.problems.extend(Problem(rel, entry.line, f"warning: {warning}", skipped=False)
                                    for warning in [*filter(None, retimed), *result.warnings])
            if result.action == "created":
                summary.created += 1
            else:
                summary.skipped += 1
