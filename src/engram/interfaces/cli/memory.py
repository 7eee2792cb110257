"""Memory commands: remember, update, recall, get, versions, list, forget, link, unlink, supersede, supersedes,
neighbours, count, export, import, stats (what the agent sees; ``--all-agents`` for the operator's whole-store view), reindex."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from engram.interfaces.cli import files, parsing, render
from engram.interfaces.cli.state import state
from engram.text import counted

if TYPE_CHECKING:
    from engram.agent_stats import AgentStats
    from engram.engine import Engram, Filters
    from engram.importers.apply import ImportedConversation
    from engram.metrics import LatencySummary
    from engram.model import Memory, Scope, WriteResult
    from engram.store.base import StoreStats

CategoryOpt = typer.Option(None, "--category", "-c", help="core, knowledge or conversation.")
TypeOpt = typer.Option(None, "--type", "-t", help="experience, conversation, learned, social, decision, achievement, ...")
LayerOpt = typer.Option(None, "--layer", help="episodic, semantic or procedural.")
TagOpt = typer.Option(None, "--tag", help="Only memories with this tag (repeatable: all must match).")
EntityOpt = typer.Option(None, "--entity", help="Only memories about this related entity, case ignored (alice finds Alice).")
MetaOpt = typer.Option(None, "--meta", help="Only memories whose metadata has key=value (repeatable; 5 matches 5 and \"5\").")
# JSON text, read by the engine (engram.where), which names the place in it that it cannot read.
WhereOpt = typer.Option(None, "--where", help='Metadata conditions as JSON, mem0\'s filter language: '
                        '\'{"priority": {"gte": 2}}\', eq ne gt gte lt lte in nin contains icontains, "*", AND/OR/NOT.')
SinceOpt = typer.Option(
    None, "--since", help="Created at or after: a date or ISO time, epoch seconds, or a phrase (yesterday, last week).")
UntilOpt = typer.Option(
    None, "--until", help="Created at or before: as --since (a day or a phrase counts whole: --until yesterday).")
AsOfOpt = typer.Option(
    None, "--as-of", help="Only facts valid at this time: ISO 8601, epoch seconds, or a phrase (its start).")
KnownAtOpt = typer.Option(
    None, "--known-at", help="As recorded at this time, with the contents of then: as --as-of."
)
# The bare REF is read as an id first, then as a key; --key is always a key (for one equal to an id).
ByKeyOpt = typer.Option(None, "--key", help="The memory with this key, even one that is also another memory's id.")


# The engine's fields an option fills under another word (``--tag`` fills ``tags``), by the option's
# name: an error names the option the user typed, as HTTP names its ``?tag=`` (``present.wire_names``).
# An option that is its field's word (``--category``, ``--as-of``, remember's ``--tags``) is named by
# the command's own options, for every command (``option_names``): it is not listed here.
FILTER_OPTIONS = {"tags": "--tag", "related_entity": "--entity"}
WRITE_OPTIONS = {"related_entity": "--entity", "links": "--link"}


@contextmanager
def _options_named(names: Mapping[str, str]) -> Iterator[None]:
    """An engine error on one of ``names``' fields, re-raised naming its option (``present.wire_names``)."""
    from engram.interfaces import present

    with present.wire_names(names):
        yield


def _one_memory(engram: Engram, command: str, ref: str | None, key: str | None) -> Memory:
    """The memory named by REF or --key (exactly one), as the engine resolves it (``Engram.named``)."""
    return engram.named(ref, key, field=command, names=("ref", "--key"))


# One end of a link or supersede: (ref, key, (the end's argument name as --help shows it, its key option)).
End = tuple[str | None, str | None, tuple[str, str]]


def _ends(command: str, refs: tuple[tuple[str, str | None], ...], keys: tuple[tuple[str, str | None], ...]) -> list[End]:
    """Which words name each end of a link or supersede: an end given by its key option (``keys``:
    each end's option name and value) is named by that key, and the positional arguments (``refs``:
    each one's name and value) fill the other ends in order, so ``engram link --key a B`` names
    ``a`` by key and B by id or key. Each end is called by the argument --help shows for it (``a``,
    ``new``) and its option. Raises ``ValidationError`` on ``command`` when more memories are named
    than there are ends."""
    from engram.errors import ValidationError

    given = [ref for _, ref in refs if ref is not None]
    options = [name for name, key in keys if key is not None]
    if len(given) + len(options) > len(keys):
        raise ValidationError(command, f"{len(given)} argument(s) and {', '.join(options)} name more than {len(keys)}"
                              " memories", "each end by its argument or its option: "
                              + ", ".join(f"{arg} or {opt}" for (arg, _), (opt, _) in zip(refs, keys, strict=True)))
    return [(given.pop(0) if key is None and given else None, key, (arg, name))
            for (arg, _), (name, key) in zip(refs, keys, strict=True)]


def _two_memories(engram: Engram, command: str, ends: list[End]) -> tuple[Memory, Memory]:
    """The memories ``ends`` name, each resolved as the engine resolves one (``Engram.named``),
    once: the command hands them to the engine as they are."""
    first, second = (engram.named(ref, key, field=command, names=names) for ref, key, names in ends)
    return first, second


def _said(ref: str | None, key: str | None, *_: object) -> str:
    """How the user named a memory (its REF or its key), for the line a command prints."""
    return str(key if ref is None else ref)


def _filters(category, type_, layer, tags, entity, meta, since, until, as_of=None, known_at=None,  # noqa: ANN001
             where=None) -> Filters:  # noqa: ANN001
    from engram.engine import Filters

    return Filters(
        category=category, type=type_, layer=layer, tags=tags, related_entity=entity,
        metadata=parsing.pairs(meta, "--meta") or None, where=where,
        since=since, until=until,
        as_of=as_of, known_at=known_at,
    )


def remember(
    ctx: typer.Context,
    content: str = typer.Argument(..., help="What to remember, or - to read it from standard input (as sent)."),
    key: str | None = typer.Option(None, "--key", "-k", help="Upsert by this key (default: made from the content)."),
    category: str = typer.Option("knowledge", "--category", "-c", help="core, knowledge or conversation."),
    type_: str | None = typer.Option(None, "--type", "-t", help="Memory type (routes the layer)."),
    layer: str | None = typer.Option(None, "--layer", help="episodic, semantic or procedural (default: from type)."),
    # --tag too: the word the filters (list, recall, forget) use for a tag, refused here before
    # though a new memory's tags can mean nothing else. Repeatable, each comma-separated.
    tags: list[str] | None = typer.Option(None, "--tags", "--tag", help="Comma-separated tags (repeatable: all are "
                                          "kept; --tag is the same)."),
    metadata: str | None = typer.Option(None, "--metadata", "-m", help="Metadata as a JSON object."),
    importance: float = typer.Option(0.5, "--importance", "-i", help="0.0 to 1.0."),
    entity: str | None = typer.Option(None, "--entity", help="Related person or thing."),
    source: str | None = typer.Option(None, "--source", help="Where this came from."),
    scope: str = typer.Option("agent", "--scope", help="global, agent or session."),
    link: list[str] | None = typer.Option(None, "--link", help="Key or id to link to (repeatable)."),
    search_context: str | None = typer.Option(
        None, "--search-context", help="Text that helps find it without being part of it (e.g. the turns around it)."
    ),
    valid_from: str | None = typer.Option(
        None, "--valid-from", help="When the fact began to hold (ISO 8601; default: a date the content states)."
    ),
    valid_until: str | None = typer.Option(None, "--valid-until", help="When the fact stopped holding (ISO 8601)."),
) -> None:
    """Store a memory (or update the one with --key)."""
    st = state(ctx)
    if content == parsing.STDIN:
        content = parsing.stdin_text("content", "UTF-8 text on standard input")
    with _options_named(WRITE_OPTIONS):
        result = st.engram().remember(
            content, key=key, category=category, type=type_, layer=layer, tags=_joined(tags), metadata=metadata,
            importance=importance, related_entity=entity, source=source, scope=scope, links=link or (),
            search_context=search_context, valid_from=valid_from, valid_until=valid_until,
        )
    _show_write(result, as_json=st.as_json)


def _joined(tags: list[str] | None) -> str | None:
    """Every ``--tags`` given, as one comma-separated text: a second ``--tags`` used to replace the
    first without a word (click keeps an option's last value)."""
    return None if tags is None else ",".join(tags)


_DONE = {"created": "stored", "updated": "updated", "unchanged": "unchanged", "duplicate": "already stored"}


def _show_write(result: WriteResult, *, as_json: bool) -> None:
    """What ``remember`` and ``update`` print: the result as JSON, or one line and its warnings."""
    if as_json:
        render.emit_json(result)
        return
    render.console.print(f"{_DONE[result.action]}: [bold]{render.markup_safe(result.memory.key)}[/bold] ({result.memory.id})")
    for warning in result.warnings:
        render.errors.print(f"[yellow]warning:[/yellow] {warning}")


def update(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Id or key (or give --key)."),
    key: str | None = ByKeyOpt,
    content: str | None = typer.Option(None, "--content", help="The new content, or - to read it from standard input."),
    category: str | None = typer.Option(None, "--category", "-c", help="core, knowledge or conversation."),
    type_: str | None = typer.Option(None, "--type", "-t", help="Memory type (re-routes the layer)."),
    layer: str | None = typer.Option(None, "--layer", help="episodic, semantic or procedural."),
    # --tag as in remember: the same word for the same field, refused here before with click's bare "No such option".
    tags: list[str] | None = typer.Option(
        None, "--tags", "--tag", help="Comma-separated tags (repeatable: all are kept; replace the stored ones; "
        "--tag is the same)."),
    metadata: str | None = typer.Option(None, "--metadata", "-m", help="Metadata as a JSON object (replaces)."),
    importance: float | None = typer.Option(None, "--importance", "-i", help="0.0 to 1.0."),
    entity: str | None = typer.Option(None, "--entity", help="Related person or thing."),
    source: str | None = typer.Option(None, "--source", help="Where this came from."),
    search_context: str | None = typer.Option(None, "--search-context", help="Text that helps find it."),
    valid_from: str | None = typer.Option(None, "--valid-from", help="When the fact began to hold (ISO 8601)."),
    valid_until: str | None = typer.Option(None, "--valid-until", help="When the fact stopped holding (ISO 8601)."),
    clear: list[str] | None = typer.Option(
        None, "--clear", help="Empty this optional field (repeatable), e.g. valid_until or related_entity."),
) -> None:
    """Change the given fields of a memory (by key or id, or --key) and keep the rest; --clear empties a field."""
    st = state(ctx)
    if content == parsing.STDIN:
        content = parsing.stdin_text("content", "UTF-8 text on standard input")
    engram = st.engram()
    with _options_named(WRITE_OPTIONS):
        result = engram.update(
            _one_memory(engram, "update", ref, key), content=content, category=category, type=type_, layer=layer,
            tags=_joined(tags), metadata=metadata, importance=importance, related_entity=entity, source=source,
            search_context=search_context,
            valid_from=valid_from, valid_until=valid_until, clear=clear or (),
        )
    _show_write(result, as_json=st.as_json)


def recall(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to look for, in plain words."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="How many results, 1-100 (default from settings)."),
    offset: int = typer.Option(0, "--offset", help="Skip this many results: the next page (offset + limit <= 1000)."),
    depth: int = typer.Option(0, "--depth", help="Follow links this many hops (0-3), each adding at most --limit memories."),
    min_relevance: float | None = typer.Option(None, "--min-relevance", help="Drop results scoring below this (0-1)."),
    mode: str = typer.Option("auto", "--mode", help="auto, hybrid, text or vector."),
    category: list[str] | None = CategoryOpt,
    type_: list[str] | None = TypeOpt,
    layer: list[str] | None = LayerOpt,
    tag: list[str] | None = TagOpt,
    entity: str | None = EntityOpt,
    meta: list[str] | None = MetaOpt,
    where: str | None = WhereOpt,
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    when: str | None = typer.Option(
        None, "--when", help="Only what happened then: yesterday, last week, in March, since Monday, ..."
    ),
    as_of: str | None = AsOfOpt,
    known_at: str | None = KnownAtOpt,
    scope: str | None = typer.Option(None, "--scope", help="Only this scope: global, agent or session."),
) -> None:
    """Find the memories most relevant to a query, with each score's parts. A time phrase in the
    query ("what did we decide last week") filters like --when; the range read is in the notes."""
    st = state(ctx)
    # The folder mirror follows changes and recall makes none it reflects: not attached here.
    with _options_named(FILTER_OPTIONS):
        result = st.reading_engram(warm=mode != "text", mirror=False).recall(
            query, limit=limit, depth=depth, min_relevance=min_relevance, mode=mode, offset=offset, when=when,
            filters=_filters(category, type_, layer, tag, entity, meta, since, until, as_of, known_at, where),
            scope=scope,  # type: ignore[arg-type]
        )
    if st.as_json:
        render.emit_json(result)
    else:
        render.hits_table(result)


def get(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Id or key (or give --key)."),
    key: str | None = ByKeyOpt,
) -> None:
    """Show one memory by key or id, or by --key."""
    st = state(ctx)
    engram = st.reading_engram()
    memory = _one_memory(engram, "get", ref, key)
    if st.as_json:
        from engram.interfaces import present

        # The versions as `versions --json` and HTTP's /versions give them: content and replaced_at
        # (each MemoryVersion's memory_id is the id beside them).
        render.emit_json({**memory.to_dict(), **present.versions_dict(engram.versions(memory))})
        return
    neighbours = engram.neighbours(memory, limit=100)
    render.memory_detail(memory, [m.key + (" (superseded)" if m.superseded_by is not None else "") for m in neighbours])


def versions(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Id or key (or give --key)."),
    key: str | None = ByKeyOpt,
) -> None:
    """Show a memory's earlier contents (each update keeps the one it replaced), oldest first, by key or id, or by --key."""
    from engram.interfaces import present

    st = state(ctx)
    engram = st.reading_engram()  # a read: no database made for an agent with none yet
    memory = _one_memory(engram, "versions", ref, key)
    found = engram.versions(memory)
    if st.as_json:
        render.emit_json(present.versions_dict(found))
    elif not found:
        render.note_line(f"{memory.key} has no earlier versions (its content was never changed)")
    else:
        render.versions_table(found, title=f"earlier contents of {render.markup_safe(memory.key)}, oldest first")


def list_(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", "-n", help="Page size."),
    offset: int = typer.Option(0, "--offset", help="Skip this many."),
    order: str = typer.Option("recent", "--order", help="recent, oldest, importance or accessed."),
    scope: str | None = typer.Option(None, "--scope", help="Only this scope: global, agent or session."),
    category: list[str] | None = CategoryOpt,
    type_: list[str] | None = TypeOpt,
    layer: list[str] | None = LayerOpt,
    tag: list[str] | None = TagOpt,
    entity: str | None = EntityOpt,
    meta: list[str] | None = MetaOpt,
    where: str | None = WhereOpt,
    since: str | None = SinceOpt,
    until: str | None = UntilOpt,
    as_of: str | None = AsOfOpt,
    known_at: str | None = KnownAtOpt,
) -> None:
    """List memories with filters and pagination."""
    st = state(ctx)
    engram = st.reading_engram()
    with _options_named(FILTER_OPTIONS):
        memories = engram.list(
            _filters(category, type_, layer, tag, entity, meta, since, until, as_of, known_at, where), order=order,
            limit=limit, offset=offset,
            scope=scope,  # type: ignore[arg-type]
        )
    if st.as_json:
        render.emit_json(memories)
    elif memories:
        render.memories_table(memories)
    else:
        filtered = any(v for v in (category, type_, layer, tag, entity, meta, where, since, until, as_of, known_at))
        render.note_line(_none_listed(engram.scope, scope, filtered=filtered, offset=offset))


def _none_listed(view: Scope, scope: str | None, *, filtered: bool, offset: int) -> str:
    """Why ``list`` found nothing, in the scopes it read: without --scope, those ``view`` sees
    (its session's with -s, the agent's, global ones); with it, that one scope alone."""
    if scope is not None:
        where = f"in the {scope} scope"
    elif view.agent is None:
        where = "in the global scope"
    elif view.session is not None:
        where = f"visible to agent {view.agent} in session {view.session} (the session's, the agent's and global ones)"
    else:
        where = f"visible to agent {view.agent} (its own and global ones)"
    matching = " matches the filters" if filtered else ""
    past = f" past --offset {offset}" if offset else ""
    return f"nothing listed: no memory {where}{matching}{past}"


def forget(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Key or id of the memory to forget."),
    key: str | None = ByKeyOpt,
    query: str | None = typer.Option(None, "--query", "-q", help=(
        "Forget every memory holding every one of these words (however short or common).")),
    tag: str | None = typer.Option(None, "--tag", help="Forget every memory with this tag."),
    older_than: str | None = typer.Option(None, "--older-than", help="Forget memories older than this (e.g. 30d)."),
    category: list[str] | None = CategoryOpt,
    dry_run: bool = typer.Option(False, "--dry-run", help="Only show what would be forgotten."),
    reason: str | None = typer.Option(None, "--reason", help="Why, kept in the audit trail."),
    erase: bool = typer.Option(False, "--erase", help="Also erase them: the audit trail keeps only their ids and times."),
    scope: str | None = typer.Option(None, "--scope", help=(
        "With --query, --tag or --older-than: only this scope (global, agent or session).")),
) -> None:
    """Forget by key/id (or --key), by query, by tag or by age; prints what was removed. With
    --erase nothing of them is kept but their ids (docs/privacy.md). An id reaches the agent's
    memory in any of its sessions; a key is read in the scopes this view reads."""
    from engram.engine import Filters, one_selector

    one_selector("forget", {"ref": ref, "--key": key, "--query": query, "--tag": tag, "--older-than": older_than})
    st = state(ctx)
    # Opened as a read: with no database yet (a new home, or an agent without one of its own) there is
    # nothing to forget, and the empty engine says so without making one; else it is ``engram()``'s.
    engram = st.reading_engram()
    one = None if ref is None and key is None else _one_memory(engram, "forget", ref, key)
    older_than_s = parsing.duration(older_than, "--older-than")
    # A bulk forget of thousands takes seconds: a Ctrl-C says which step it stopped (the engine's
    # steps say whether the memories were gone by then).
    with render.progress("finding what to forget", quiet=st.as_json) as progress:
        removed = engram.forget(
            one, query=query, tag=tag, older_than_s=older_than_s,
            filters=Filters(category=category), dry_run=dry_run, reason=reason, erase=erase, scope=scope,
            progress=progress,
        )
    from engram.interfaces import present

    if st.as_json:
        render.emit_json(present.forget_answer({"dry_run": dry_run, "removed": removed}, removed, erase=erase,
                                               dry_run=dry_run))
        return
    if removed and erase and not dry_run:  # named by id alone, as at every door (present.forget_answer)
        render.console.print(f"erased {counted(len(removed), 'memory')}: "
                             f"{', '.join(m.id for m in removed)}", highlight=False)
    elif removed:
        verb = "would erase" if erase else ("would forget" if dry_run else "forgot")
        if len(removed) > _LONG_TABLE:
            # Said before the table, which rich builds whole before printing (18,000 rows: 40 s of
            # silence, the forget long done): a Ctrl-C meanwhile left no word of what was removed.
            render.note_line(f"{verb} {counted(len(removed), 'memory')}; listing them")
        # A Ctrl-C while the table is drawn said nothing (exit 130): that it stopped the listing, not the forget.
        listed = counted(len(removed), "forgotten memory") if verb == "forgot" else f"{counted(len(removed), 'memory')} it {verb}"
        with render.progress(f"listing the {listed}", quiet=True):
            render.memories_table(removed, title=verb)
    else:
        render.note_line("nothing to forget")


# Rows past which a table takes a noticeable time to draw (about 2 ms a row): said first, in a line.
_LONG_TABLE = 200


EndArg = typer.Argument(None, help="Id or key (or name this end by its key option).")
# Either end of a link or supersede may be named by key alone, as --key names the memory of get.
FirstKeyOpt = typer.Option(None, "--key", help="The first memory by this key, even one that is also another's id.")
ToKeyOpt = typer.Option(None, "--to-key", help="The other memory by this key, even one that is also another's id.")


def link(ctx: typer.Context, a: str | None = EndArg, b: str | None = EndArg, key: str | None = FirstKeyOpt,
         to_key: str | None = ToKeyOpt) -> None:
    """Link two memories both ways (each by id or key, or by --key / --to-key)."""
    st = state(ctx)
    engram = st.engram()
    ends = _ends("link", (("a", a), ("b", b)), (("--key", key), ("--to-key", to_key)))
    first, second = _two_memories(engram, "link", ends)
    changed = engram.link(first, second)
    said = [_said(*end) for end in ends]
    if st.as_json:
        render.emit_json({"linked": said, "changed": changed})
    else:
        render.console.print(f"linked {said[0]} <-> {said[1]}" if changed else f"{said[0]} and {said[1]} were already linked",
                             markup=False, highlight=False)


def supersede(
    ctx: typer.Context,
    old: str | None = typer.Argument(None, help="Id or key of the memory that no longer holds (or give --key)."),
    new: str | None = typer.Argument(None, help="Id or key of the memory that replaces it (or give --by-key)."),
    key: str | None = typer.Option(None, "--key", help="The old memory by this key, even one that is also another's id."),
    by_key: str | None = typer.Option(None, "--by-key", help="The new memory by this key, even one that is also another's id."),
) -> None:
    """Mark OLD superseded by NEW: kept, out of recall, its valid time closed where NEW begins."""
    st = state(ctx)
    engram = st.engram()
    ends = _ends("supersede", (("old", old), ("new", new)), (("--key", key), ("--by-key", by_key)))
    older, newer = _two_memories(engram, "supersede", ends)
    closed = engram.supersede(older, newer)
    if st.as_json:
        render.emit_json(closed)
    else:
        render.console.print(f"superseded {closed.key} by {_said(*ends[1])}; valid until {render.when(closed.valid_until)}",
                             markup=False, highlight=False)


def unlink(ctx: typer.Context, a: str | None = EndArg, b: str | None = EndArg, key: str | None = FirstKeyOpt,
           to_key: str | None = ToKeyOpt) -> None:
    """Remove the link between two memories (each by id or key, or by --key / --to-key)."""
    st = state(ctx)
    engram = st.engram()
    ends = _ends("unlink", (("a", a), ("b", b)), (("--key", key), ("--to-key", to_key)))
    first, second = _two_memories(engram, "unlink", ends)
    removed = engram.unlink(first, second)
    said = [_said(*end) for end in ends]
    if st.as_json:
        render.emit_json({"unlinked": removed})
    else:
        render.console.print(f"unlinked {said[0]} <-> {said[1]}" if removed else f"{said[0]} and {said[1]} were not linked",
                             markup=False, highlight=False)


def neighbours(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Id or key (or give --key)."),
    key: str | None = ByKeyOpt,
    limit: int = typer.Option(20, "--limit", "-n", help="How many linked memories to show (1 to 1000)."),
) -> None:
    """Memories linked to a memory (by id or key, or by --key)."""
    st = state(ctx)
    engram = st.reading_engram()
    found = engram.neighbours(_one_memory(engram, "neighbours", ref, key), limit=limit)
    if st.as_json:
        render.emit_json(found)
    elif found:
        render.memories_table(found, title=f"linked to {_said(ref, key)}")
    else:  # as in the table, a link to another agent's memory is not counted (a superseded one is, marked)
        render.note_line(f"nothing linked: no memory this agent sees is linked to {_said(ref, key)}")


def supersedes(
    ctx: typer.Context,
    ref: str | None = typer.Argument(None, help="Id or key (or give --key)."),
    key: str | None = ByKeyOpt,
    limit: int = typer.Option(50, "--limit", "-n", help="How many superseded memories to show (1 to 1000)."),
) -> None:
    """The memories a memory supersedes (by id or key, or by --key), oldest first: the other way
    along `engram supersede`, which the memory itself does not record (its superseded_by is)."""
    from engram.interfaces import present

    st = state(ctx)
    engram = st.reading_engram()
    memory = _one_memory(engram, "supersedes", ref, key)
    found = engram.supersedes(memory, limit=limit)
    if st.as_json:
        render.emit_json(present.supersedes_dict(memory, found))
    elif found:
        render.memories_table(found, title=f"superseded by {render.markup_safe(memory.key)}, oldest first")
    else:
        render.note_line(f"{memory.key} supersedes no memory this agent sees")


def count(
    ctx: typer.Context,
    category: list[str] | None = CategoryOpt,
    type_: list[str] | None = TypeOpt,
    tag: list[str] | None = TagOpt,
    scope: str | None = typer.Option(None, "--scope", help="Only this scope: global, agent or session."),
) -> None:
    """Count memories."""
    from engram.engine import Filters

    st = state(ctx)
    with _options_named(FILTER_OPTIONS):
        n = st.reading_engram().count(Filters(category=category, type=type_, tags=tag), scope=scope)  # type: ignore[arg-type]
    if st.as_json:
        render.emit_json({"count": n})
    else:
        render.console.print(str(n))


# What ``engram export --format`` takes: engram's snapshot, another system's file (``exporters.FORMATS``,
# spelled here so ``--help`` need not import the exporters) or a memory folder. One list for the check
# and the error, so the error names every format there is.
OTHER_SYSTEMS = ("mem0", "basic-memory")
FOLDER_FORMATS = ("markdown", "yaml", "json")
EXPORT_FORMATS = ("snapshot", "mem0", *FOLDER_FORMATS, "basic-memory")


def export(
    ctx: typer.Context,
    path: Path | None = typer.Argument(None, help="File to write (default: standard output); a folder for other formats."),
    fmt: str = typer.Option("snapshot", "--format", "-f", help="snapshot or mem0 (a JSON file), markdown, yaml or json "
                            "(a memory folder), or basic-memory (a folder of notes)."),
    all_agents: bool = typer.Option(
        False, "--all-agents", help="A memory folder of the whole store (every agent's memories), even when an agent is "
                                    "set in ENGRAM_AGENT or the config file: the operator's copy."),
) -> None:
    """Export what this agent sees (its memories, its session's, global ones) as a JSON snapshot (no embeddings),
    mem0 JSON, basic-memory notes or a memory folder. Run as no agent (no --agent, ENGRAM_AGENT or config
    agent), or with --all-agents, a memory folder holds every agent's memories: the operator's copy."""
    if fmt not in EXPORT_FORMATS:
        from engram import jsondoc
        from engram.errors import ValidationError

        raise ValidationError("--format", f"unknown format {jsondoc.shown(fmt)}", list(EXPORT_FORMATS))
    if all_agents and fmt not in FOLDER_FORMATS:
        from engram.errors import ValidationError

        raise ValidationError("--all-agents", f"--format {fmt} exports what this agent sees",
                              "--all-agents with --format markdown, yaml or json")
    if fmt in OTHER_SYSTEMS:
        _export_other(ctx, fmt, path)
        return
    if fmt != "snapshot":
        files.export_dir(ctx, fmt, path, all_agents=all_agents)
        return
    document = state(ctx).reading_engram().export_snapshot()
    if path is None:
        sys.stdout.write(document + "\n")
    else:
        _write(path, document)
        _exported(ctx, path, "snapshot", len(json.loads(document)["memories"]), f"exported to {path}")


def _export_other(ctx: typer.Context, fmt: str, path: Path | None) -> None:
    from engram.exporters import basic_memory, mem0

    engram = state(ctx).reading_engram()
    if fmt == "mem0":
        document = mem0.dump(engram)
        if path is None:
            sys.stdout.write(document + "\n")
            return
        _write(path, document)
        _exported(ctx, path, fmt, len(json.loads(document)["results"]), f"exported to {path} as mem0 JSON")
        return
    if path is None:
        from engram.errors import ValidationError

        raise ValidationError("path", "basic-memory notes need a folder", "a folder to write the notes into")
    settings = state(ctx).settings()
    n = basic_memory.write(engram, path, synced=settings.files.synced_folder(settings.home))
    _exported(ctx, path, fmt, n, f"exported {counted(n, 'note')} to {path}")


def _exported(ctx: typer.Context, path: Path, fmt: str, n: int, said: str) -> None:
    """What an export into ``path`` reports: with ``--json`` the one JSON document standard output
    holds (``export --format markdown DIR``'s fields), else ``said`` on standard error, where the
    status line of a command whose standard output would be the document goes."""
    if state(ctx).as_json:
        render.emit_json({"exported": n, "format": fmt, "path": str(path)})
    else:
        render.errors.print(said, markup=False, highlight=False)


def import_(
    ctx: typer.Context,
    path: Path = typer.Argument(..., help="A file, folder or export ZIP to import, or - for a document on stdin."),
    kind: str | None = typer.Option(
        None, "--from", help="snapshot, folder, mem0, mcp-memory, mcp-memory-service, letta, zep, chatgpt, claude, "
        "openclaw, basic-memory, clawless, ptrclaw-sqlite or sclaw (detected when omitted)."),
    into_agent: bool = typer.Option(
        False, "--into-agent", help="Import everything into this agent instead of the source's users/agents."),
    saved_memories: bool = typer.Option(
        False, "--saved-memories", help="ChatGPT's export: make its saved memories (what ChatGPT wrote to its memory "
        "tool) core memories too. They may have been changed or deleted in ChatGPT since; the export does not say."),
) -> None:
    """Import memories: engram snapshots and memory folders, PtrClaw files and memory.db, sclaw's memory.db,
    mem0, the MCP memory server, mcp-memory-service, Letta's Agent File (.af), Zep (its users dumped with its
    SDK), ChatGPT's and Claude.ai's data exports (the ZIP, its folder or conversations.json), OpenClaw,
    basic-memory/Obsidian and Clawless. Malformed input imports nothing and names the line, record or row;
    what an earlier import brought is skipped (Zep's facts and summaries take what Zep changed since), and
    what was forgotten since is not brought back."""
    from engram.importers import DATABASE_BY_PATH, check_kind, check_saved_memories, detect, detect_document, read_text

    if kind is not None:
        check_kind(kind)
    st = state(ctx)
    # The model loads while the engine is imported and the source read: an import embeds.
    st.preload_model()
    from engram.interfaces.cli import importing

    source: str | Path = (parsing.stdin_text("path", "a UTF-8 document on standard input", database=DATABASE_BY_PATH)
                          if str(path) == parsing.STDIN
                          else parsing.existing_path("path", path, "a file, folder or export ZIP to import", "file or folder"))
    if kind is None:
        kind = detect_document(source) if isinstance(source, str) else detect(path)
    check_saved_memories(kind, saved_memories)  # before engram's own kinds, which do not take it
    if kind == "folder":
        files.import_dir(ctx, path)
        return
    if kind == "snapshot":
        document = source if isinstance(source, str) else read_text(path)
        result = importing.import_snapshot_with_progress(st.engram(), document, quiet=st.as_json)
        if st.as_json:
            render.emit_json(result)
        else:
            # Named by its kind as every other kind's summary is (a PtrClaw memory file is one too).
            render.console.print(f"imported {result.imported} from {kind}, skipped {result.skipped} already present")
            for warning in result.warnings:
                render.errors.print(f"[yellow]warning:[/yellow] {render.markup_safe(warning)}")
        return
    summary = importing.import_with_progress(st.engram(), source, kind, keep_agents=not into_agent,
                                          saved_memories=saved_memories, quiet=st.as_json)
    if st.as_json:
        render.emit_json(summary)
        return
    changed = f"updated {summary.updated} changed in {kind} since, " if summary.updated else ""
    forgotten = f", left out {summary.forgotten} forgotten since" if summary.forgotten else ""
    render.console.print(f"imported {summary.imported} from {kind}, {changed}skipped {summary.skipped} already present"
                         f"{forgotten}")
    elsewhere = [a for a in summary.agents if a != st.engram().scope.agent]
    if elsewhere:  # the source's own users or agents: this agent does not see them
        shown = ", ".join(render.markup_safe(a) for a in elsewhere[:10]) + (
            f" and {len(elsewhere) - 10} more" if len(elsewhere) > 10 else "")
        # The command shown lists something: an agent whose memories are all in sessions has an
        # empty list (the sessions line below names those), one given only messages has no memories.
        listed = [a for a in elsewhere if a in summary.listed_agents]
        command = f"engram -a {render.markup_safe(listed[0])} list; " if listed else ""
        render.console.print(f"into agent{'s' if len(elsewhere) > 1 else ''} {shown} "
                             f"({command}--into-agent keeps all in this one)")
    _sessions(summary.sessions, st.engram().scope)
    if summary.messages_imported or summary.messages_skipped:
        render.console.print(f"history: {counted(summary.messages_imported, 'message')} added, "
                             f"{summary.messages_skipped} already present")
    _titled(summary.conversations)
    if summary.summaries_imported or summary.summaries_skipped:
        render.console.print(f"history summaries: {summary.summaries_imported} set, "
                             f"{summary.summaries_skipped} kept as they were")
    if summary.operator_notes == "skipped" and into_agent:
        render.console.print("operator notes (MEMORY.md): skipped: every agent's prompt holds them, and --into-agent"
                             " writes into this agent alone (import without it to add them)", markup=False)
    elif summary.operator_notes != "none":
        render.console.print(f"operator notes (MEMORY.md): {summary.operator_notes}")
    for warning in summary.warnings:
        render.errors.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


def _sessions(sessions: tuple[str, ...], here: Scope) -> None:
    """The sessions an import put memories in (mem0's runs), the first by name and the command
    that lists it: an agent's list, count and recall without ``-s`` do not show a session's."""
    from engram.model import Scope
    shown = [scope for scope in map(Scope.parse, sessions) if scope != here]
    if not shown:
        return
    first = shown[0]
    agent, session = render.markup_safe(first.agent or ""), render.markup_safe(first.session or "")
    more = f" and {len(shown) - 1} more" if len(shown) > 1 else ""
    render.console.print(f"into session{'s' if len(shown) > 1 else ''} {session} of {agent}{more} "
                         f"(engram -a {agent} -s {session} list)", highlight=False)


def _titled(conversations: tuple[ImportedConversation, ...]) -> None:
    """The titled conversations that gained messages (a chat export's), the first ten by name."""
    gained = [c for c in conversations if c.messages_added]
    if not conversations:
        return
    render.console.print(f"conversations: {len(gained)} of {len(conversations)} gained messages")
    for c in gained[:10]:
        render.console.print(f"  {render.markup_safe(c.key)}  {render.markup_safe(c.title or '(untitled)')} "
                             f"(+{c.messages_added})", highlight=False)
    if len(gained) > 10:
        render.console.print(f"  and {len(gained) - 10} more (engram history list)")


def _write(path: Path, document: str) -> None:
    """Write a snapshot, creating missing parent folders (as a folder export does)."""
    from engram.errors import ValidationError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document, encoding="utf-8")
    except OSError as exc:
        raise ValidationError("path", f"cannot write {path}: {exc.strerror or exc}", "a writable file path") from None


def stats(
    ctx: typer.Context,
    all_agents: bool = typer.Option(False, "--all-agents",
                                    help="The whole store (every agent's memories, the file's size): the operator's view;"
                                         " with per_agent_databases, every agent's database."),
) -> None:
    """What this agent sees (its memories, its session's with -s, and global ones) by category, type
    and scope (its other sessions listed apart, not counted), their links and vectors;
    recall/embedding latency percentiles. --all-agents: the whole store (with per_agent_databases,
    each agent's database in turn)."""
    st = state(ctx)
    if all_agents:
        from engram.root import store_stats_by_database

        # The operator's reach: every agent's database, none made for an agent nobody used, nor
        # in a home with no database yet (a read: ``reading``).
        _store_stats(store_stats_by_database(st.reaching_engram(all_agents=True, reading=True)), st.as_json)
        return
    from engram.agent_databases import not_made_yet

    # A read makes no database: an agent with none yet (``has_no_database_yet``) has nothing stored.
    engram = st.reading_engram()
    data, latency = engram.visible_stats(), engram.metrics.summary()
    if not_made_yet(engram) and not st.as_json:
        render.errors.print(f"note: agent {render.markup_safe(data.agent or '')} has no database yet (its first write"
                            f" makes {render.markup_safe(data.location)}): nothing stored", highlight=False)
    if st.as_json:
        from engram.interfaces import present

        render.emit_json({**present.agent_stats_dict(data), "location": data.location, "latency": latency})
        return
    where = data.agent if data.session is None else f"{data.agent}/{data.session}"
    _figures(data, f"visible to agent {where} (its own and global ones)",
             {"category": data.by_category, "type": data.by_type, "scope": data.by_scope},
             beside=lambda scope: _outside_view(scope, data))
    _latency(latency)


def _figures(data: StoreStats | AgentStats, memories: str, groups: dict[str, dict[str, int]], whose: str = "",
             beside: Callable[[str], str] = lambda scope: "") -> None:
    """The counts ``stats`` prints for one view or database, each group under its name (``by
    category``...); ``whose`` says whose links and vectors they are; ``beside(scope)`` a note after a
    scope's count (a session the view does not read: counted apart from the memories above)."""
    render.console.print(f"backend      {data.backend} ({data.location})")
    render.console.print(f"memories     {data.memories} {memories}")
    for label, group in groups.items():
        render.console.print(f"  by {label}:")
        for name, n in sorted(group.items()):
            note = beside(name) if label == "scope" else ""
            render.console.print(f"    {render.markup_safe(name):<20} {n}{note}", highlight=False)
    render.console.print(f"links        {data.links}{f' ({whose})' if whose else ''}")
    render.console.print(f"vectors      {data.vectors} ({data.embedding_identity or 'none'}{f', {whose}' if whose else ''})")


def _outside_view(scope: str, data: AgentStats) -> str:
    """The note after a session of the agent the view does not read (``by_scope`` lists every one,
    where its memories are): not in the figures above, and the option that reads it."""
    from engram.model import Scope

    parsed = Scope.parse(scope)
    if parsed.session is None or parsed.session == data.session:
        return ""
    return f"  (not counted: another session, -s {render.markup_safe(parsed.session)})"


def _store_stats(every: list[tuple[str | None, StoreStats, list[LatencySummary]]], as_json: bool) -> None:
    """Each database's figures (``root.store_stats_by_database``), with the agent whose own database it is."""
    if as_json:
        shown = [{"view": "store", **({} if agent is None else {"agent": agent}), **render._plain(data), "latency": latency}
                 for agent, data, latency in every]
        # One database: its figures, as before; one per agent (per_agent_databases): each agent's too.
        render.emit_json(shown[0] if len(shown) == 1 else {**shown[0], "agent_databases": shown[1:]})
        return
    for agent, data, latency in every:
        # With one database per agent each holds its agent's memories and the global ones it keeps.
        whole, each = ("in the whole store (all agents)", "all agents") if agent is None else (
            f"in agent {agent}'s own database (its memories and global ones)", f"agent {agent}'s database")
        if agent is not None:
            render.console.print(f"[dim]agent {agent}'s own database:[/dim]")
        _figures(data, whole, {"category": data.by_category, "scope": data.by_scope}, each)
        render.console.print(f"size         {data.size_bytes / 1024:.1f} KiB")
        _latency(latency)


def _latency(latency: list[LatencySummary]) -> None:
    for item in latency:
        render.console.print(f"{item.name:<12} p50 {item.p50_ms:.2f} ms  p95 {item.p95_ms:.2f} ms  "
                             f"p99 {item.p99_ms:.2f} ms  (n={item.count})")


def reindex(
    ctx: typer.Context,
    all_agents: bool = typer.Option(
        False, "--all-agents", help="With per_agent_databases: every agent's database, even when an agent is set in"
                                    " ENGRAM_AGENT or the config file (a shared database is re-embedded whole anyway)."),
) -> None:
    """Re-embed every memory of the database with the configured embedding model (after a model
    change). Vectors are kept per database, one model each: a shared database is re-embedded whole,
    every agent's memories; with per_agent_databases, --agent NAME re-embeds that agent's own
    database, and no agent (or --all-agents) every agent's database in turn."""
    from engram.root import reindex_targets

    st = state(ctx)
    st.refuse_all_agents_beside_a_view(all_agents, "re-embeds every agent's database", "that agent's own database")
    done: list[tuple[str | None, Engram, int]] = []
    # Only what is stored is re-embedded: an agent with no database yet (or a new home) gets none made.
    reach = st.reaching_engram(all_agents=all_agents, reading=True)
    targets = reindex_targets(reach, st.settings(), all_agents=all_agents)
    if not targets:
        if st.as_json:
            render.emit_json({"embedded": 0, "embedding_identity": "none", "databases": []})
        else:  # as stats' note, and history compact's "nothing to compact": nothing done is no error
            whose = f"agent {reach.scope.agent} has" if st.settings().per_agent_databases else "there is"
            render.note_line(f"nothing to re-embed: {whose} no database yet (its first write makes {reach.store.location()})")
        return
    for database, engine in targets:
        first = "embedding" if database is None else f"embedding {database}'s database"
        with render.progress(first, quiet=st.as_json) as report:
            done.append((database, engine, engine.reindex(lambda n, total, first=first: report(first, n, total))))
    identity = done[0][1].store.vector_identity() or "none"
    total = sum(n for _, _, n in done)
    if st.as_json:
        render.emit_json({"embedded": total, "embedding_identity": identity, "databases": [
            {"database_of": database, "location": engine.store.location(), "embedded": n,
             "embedding_identity": engine.store.vector_identity()} for database, engine, n in done]})
        return
    for database, engine, n in done:
        whose = ("the whole database: every agent's memories (vectors are kept per database)" if database is None
                 else f"agent {database}'s own database")
        render.console.print(f"embedded {counted(n, 'memory')} with {engine.store.vector_identity() or 'none'}"
                             f" in {engine.store.location()}, {whose}", markup=False, highlight=False)
    if len(done) > 1:
        render.console.print(f"in all: {counted(total, 'memory')} in {len(done)} databases", highlight=False)


def register(app: typer.Typer) -> None:
    for fn, name in (
        (remember, "remember"), (update, "update"), (recall, "recall"), (get, "get"), (versions, "versions"),
        (list_, "list"), (forget, "forget"),
        (link, "link"), (unlink, "unlink"), (supersede, "supersede"), (supersedes, "supersedes"),
        (neighbours, "neighbours"), (count, "count"),
        (export, "export"),
        (import_, "import"), (stats, "stats"), (reindex, "reindex"),
    ):
        app.command(name)(fn)
