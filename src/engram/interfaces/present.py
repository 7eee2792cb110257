"""How memories, hits and stats look on the wire, shared by MCP, HTTP and the CLI's ``--json`` so
all say the same thing.

``memory_dict`` is engram's own shape (the snapshot format), ``versions_dict`` a memory's earlier
contents; ``clawcode_result`` is ClawCode's
recall result (memory_id, content, relevance, tags, timestamp, context) that MCP agents expect;
``error_text`` is an engram error as a tool error a model reads (``field_name`` names a field the
way every door does, ``wire_names`` (``wire_named``) under the name a door's caller sent;
``served_text`` is an error as a remote client may read it, without the server's paths); ``tool_write``,
``tool_recall`` and ``tool_forget`` are what an agent's remember, recall and forget tools answer,
at every door that gives a model those tools (MCP, the Pydantic AI, Agno and Strands toolsets;
``tool_calls`` runs the forget itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

from engram.agent_stats import AgentStats
from engram.errors import ConfigError, NotFoundError, ValidationError
from engram.model import Hit, Memory, MemoryVersion, RecallResult, WriteResult, parse_number
from engram.temporal.instants import iso  # (re-exported: the doors format instants through present)

# The labels pydantic puts after a field for each member of a union it tried (``valid_from.float``,
# ``arguments.dict[str,any]``, ``chatId.function-after[_usable(), str]``): which type was tried,
# not part of the field's name.
_UNION_MEMBER = re.compile(r"str|int|float|bool|bytes|none|datetime|date|time|timedelta|decimal|uuid|constrained-[a-z]+"
                           r"|(?:list|dict|set|frozenset|tuple|literal|function-(?:after|before|wrap|plain))\[.*\]",
                           re.DOTALL)
_SOURCES = ("body", "query", "path", "header", "cookie")


def field_name(loc: Sequence[Any], *, located: bool = False) -> str:
    """pydantic's location of an error as engram names fields at every door: ``messages[1].role``,
    ``filters.tags[0]`` (a list item by its index in brackets), not ``messages.1.role``, and
    without the union member pydantic tried (``valid_from``, not ``valid_from.float``).
    ``located``: ``loc`` starts with where the field came from (FastAPI's ``body``/``query``/
    ``path``/``header``), which is not its name; only that first part is dropped, so a field
    named ``query`` (a body's or a tool's) is still named."""
    parts = list(loc[1:] if located and loc and loc[0] in _SOURCES else loc)
    named = ""
    for part in parts:
        if isinstance(part, str) and _UNION_MEMBER.fullmatch(part):
            continue
        named += f"[{part}]" if isinstance(part, int) else (f".{part}" if named else str(part))
    return named or "body"


@contextmanager
def wire_names(names: Mapping[str, str], accepts: Mapping[str, str] | None = None) -> Iterator[None]:
    """Re-raise a ``ValidationError`` on one of the engine's fields (``names``' keys: ``tags``,
    ``related_entity``) under the name the door's caller sent (its value: ``tag`` for HTTP's
    ``?tag=``, ``filters.tags`` for MCP's recall), an item or member of it included (``tags[1]``).
    A door whose names differ from the engine's holds its map beside the call it makes, and this
    is the one place that applies one, so every error names what the client sent. ``accepts``
    says, by engine field, what the door takes for a whole field where the engine's ``allowed``
    speaks of another door's means (the import ``source``: a ``Path``, which no HTTP body holds).
    A ``NotFoundError`` on such a field (a link's end, ``links[0]``) is named the same way."""
    try:
        yield
    except ValidationError as exc:
        named = wire_named(exc, names, accepts)
        if named is exc:
            raise
        raise named from exc
    except NotFoundError as exc:
        for engine, wire in names.items():
            if exc.field is not None and (exc.field == engine or exc.field.startswith((engine + "[", engine + "."))):
                raise NotFoundError(exc.what, exc.ref, field=wire + exc.field[len(engine):]) from exc
        raise


def wire_named(exc: ValidationError, names: Mapping[str, str], accepts: Mapping[str, str] | None = None,
               ) -> ValidationError:
    """``exc`` under the name the door's caller sent, as ``wire_names`` re-raises it: a new error
    when its field (or an item or member of it) is one of ``names``' keys, else ``exc`` itself."""
    for engine, wire in names.items():
        if exc.field == engine or exc.field.startswith((engine + "[", engine + ".")):
            allowed = (accepts or {}).get(engine, exc.allowed) if exc.field == engine else exc.allowed
            return type(exc)(wire + exc.field[len(engine):], exc.problem, allowed)
    return exc


# An absolute path in an error's text: POSIX (``/srv/engram/memory.db``, ``~/.engram``), Windows
# (``C:\\data\\memory.db``, ``\\\\host\\share``). A folder's name may hold a space when more path follows
# it (``/Users/me/Library/Application Support/engram/memory.db``); the path ends at other space,
# a quote or a bracket, and loses a trailing ``:``, ``,``, ``.`` or ``;`` (the sentence's, not the name's).
_PATH = re.compile(r"""(?<![\w/.~:-])(?:~|[A-Za-z]:|\\\\[^\s\\/'"]+)?[/\\](?:[^\s'"()\[\]<>]|
                       \ (?=[^\s'"()\[\]<>/\\]+[/\\]))+""", re.VERBOSE)


def _name_only(match: re.Match[str]) -> str:
    path = match.group(0)
    tail = len(path) - len(path.rstrip(":,.;"))
    path, end = (path[:-tail], path[-tail:]) if tail else (path, "")
    name = re.split(r"[/\\]", path.rstrip("/\\"))[-1]
    return ("…/" + name if name and name not in ("~", ".", "..") and not name.endswith(":") else "…") + end


def without_paths(text: str) -> str:
    """``text`` with each absolute path cut to its last name (``…/memory.db``): what a remote
    client may learn of the server's files."""
    return _PATH.sub(_name_only, text)


# Errors caused by the server's own state (its files, settings, providers), answered 5xx over
# HTTP: their text names the server's files, which is the operator's to read, not a client's.
# Input errors and not-found name only what the client sent, and are passed on whole.
_CLIENT_SIDE = (ValidationError, NotFoundError)


def served_text(exc: Exception) -> str:
    """``str(exc)`` as a remote client (HTTP, MCP over HTTP) may read it: an error of the server's
    state without its paths (``without_paths``; the server logs the whole text), any other whole.
    The one rule for both remote doors; the CLI and MCP over stdio are the operator's own, and
    keep the paths."""
    text = str(exc)
    if isinstance(exc, _CLIENT_SIDE):
        return text
    served = without_paths(text)
    return served if served == text else f"{served} (the server's log names the full path)"


def error_text(exc: Exception, *, remote: bool = False) -> str:
    """An engram error as a tool's error text, for a model to read and act on (MCP's tool errors,
    the Pydantic AI tools' retry prompts): which field was wrong and what is allowed, or what was
    not found. ``remote``: for a client of the server's (MCP over HTTP), without server paths."""
    if isinstance(exc, ValidationError):
        return f"invalid {exc.field}: {exc.reason}"
    if isinstance(exc, NotFoundError):
        return f"{exc}; recall first to find the right memory_id or key"
    said = served_text(exc) if remote else str(exc)
    if isinstance(exc, ConfigError):
        return f"engram is misconfigured: {said}"
    return f"memory storage failed: {said}"


def memory_dict(memory: Memory) -> dict[str, Any]:
    return memory.to_dict()


def supersedes_dict(memory: Memory, superseded: Sequence[Memory]) -> dict[str, Any]:
    """A memory and those it supersedes (``Engram.supersedes``), oldest first, as HTTP's
    ``/supersedes`` and ``engram --json supersedes`` both give them."""
    return {"memory": memory_dict(memory), "supersedes": [memory_dict(m) for m in superseded]}


def versions_dict(versions: Sequence[MemoryVersion]) -> dict[str, Any]:
    """A memory's earlier contents (``Engram.versions``), oldest first: what each said and when an
    update replaced it (epoch seconds), as HTTP's ``/versions``, MCP's ``versions`` tool and
    ``engram --json versions`` all give them."""
    return {"versions": [{"content": v.content, "replaced_at": v.replaced_at} for v in versions]}


def hit_dict(hit: Hit) -> dict[str, Any]:
    """A hit with the parts of its score, so a ranking can be explained."""
    return {"memory": memory_dict(hit.memory), "score": round(hit.score, 6),
            "parts": {k: round(v, 6) for k, v in asdict(hit.parts).items()}, "via": hit.via}


def recall_dict(result: RecallResult) -> dict[str, Any]:
    return {"hits": [hit_dict(h) for h in result.hits], "mode": result.mode, "notes": list(result.notes)}


# The names a ClawCode recall result's ``context`` gives the memory's own fields (``clawcode_result``),
# each with the ``remember`` argument that sets it (None: none does). A metadata entry of one of
# these names is shadowed there, so ``remember``'s ``context`` refuses them.
OWN_CONTEXT_FIELDS: dict[str, str | None] = {
    "scope": "scope", "key": "key", "category": "category", "type": "type", "links": "links", "via": None,
    "valid_from": "valid_from", "valid_until": "valid_until"}


def clawcode_result(hit: Hit) -> dict[str, Any]:
    """ClawCode's recall result: relevance is the hit's score (0..1). ``context`` gives back the
    memory's metadata (what ``remember``'s ``context`` held besides session_id and timestamp) with
    engram's own fields, which win over a metadata key of the same name."""
    m = hit.memory
    context: dict[str, Any] = {**m.metadata, "scope": str(m.scope), "key": m.key, "category": m.category.value,
                               "type": m.type}
    if m.scope.session is not None:
        context["session_id"] = m.scope.session
    if m.links:
        context["links"] = list(m.links)
    if hit.via:
        context["via"] = hit.via
    for name in ("valid_from", "valid_until"):
        if getattr(m, name) is not None:
            context[name] = iso(getattr(m, name))
    return {
        "memory_id": m.id,
        "content": m.content,
        "relevance": round(hit.score, 4),
        "tags": list(m.tags),
        "timestamp": iso(m.created_at),
        "context": context,
    }


def write_dict(result: WriteResult) -> dict[str, Any]:
    return {"memory_id": result.memory.id, "key": result.memory.key, "action": result.action,
            "warnings": list(result.warnings), "memory": memory_dict(result.memory)}


def tool_write(result: WriteResult) -> dict[str, Any]:
    """A write as an agent's remember tool answers it (MCP, Pydantic AI, Agno): the memory's id, key,
    what happened and any warnings; not the whole memory, which the model just wrote."""
    return {k: v for k, v in write_dict(result).items() if k != "memory"}


def tool_recall(hits: Sequence[Hit], notes: Sequence[str]) -> dict[str, Any]:
    """A recall as an agent's recall tool answers it: ClawCode's result shape, and the notes (why
    nothing was found, the time range read) when there are any."""
    out: dict[str, Any] = {"results": [clawcode_result(hit) for hit in hits]}
    if notes:
        out["notes"] = list(notes)
    return out


# ``older_than_days`` (the tools' and HTTP's unit) in the engine's seconds.
DAY_S = 86_400.0


def forget_tool_selection(memory_id: str | None, key: str | None, query: str | None, tag: str | None,
                          older_than_days: float | None) -> float | None:
    """A forget tool's selectors checked in its own argument names (exactly one of memory_id, key,
    query, tag, older_than_days; the engine would name its own, ``ref`` and ``older_than_s``), and
    ``older_than_days`` as the engine's ``older_than_s``. Raises ``ValidationError`` on ``forget``."""
    from engram.engine import one_selector

    one_selector("forget", {"memory_id": memory_id, "key": key, "query": query, "tag": tag,
                            "older_than_days": older_than_days})
    if older_than_days is None:
        return None
    # Read here, in days: NaN days made NaN seconds, refused naming the engine's older_than_s.
    return parse_number(older_than_days, "older_than_days", "a number, 0 or more", 0) * DAY_S


def tool_forget(removed: Sequence[Memory], dry_run: bool, reason: str | None, erase: bool = False) -> dict[str, Any]:
    """A forget as an agent's forget tool answers it: the ids and keys removed (or that would be);
    an erase's as ``forget_answer`` words it."""
    answer = {"forgotten": [m.id for m in removed], "keys": [m.key for m in removed], "count": len(removed),
              "dry_run": dry_run, "reason": reason}
    return forget_answer(answer, removed, erase=erase, dry_run=dry_run)


# The fields a door's forget answer lists the memories in beyond their ids: the CLI's ``removed``
# (each memory whole), HTTP's ``forgotten`` (each memory whole from ``POST /memory/forget``), a
# forget tool's ``keys``.
_LISTING = ("removed", "forgotten", "keys")


def forget_answer(answer: dict[str, Any], removed: Sequence[Memory], *, erase: bool, dry_run: bool) -> dict[str, Any]:
    """A door's ``answer`` to a forget of ``removed``, as every door gives it. A plain forget's is
    ``answer`` itself. An erase's says ``erased``; once done it names the memories by id alone
    (``forgotten``, and ``count``), whatever else the door lists them by left out: a key is often
    made from the content, and the answer lands where an erase does not reach (an agent's
    transcript, a terminal, a log). A dry run erases nothing: it lists what it would, as the door does."""
    if not erase:
        return answer
    if dry_run:
        return {**answer, "erased": True}
    kept = {name: value for name, value in answer.items() if name not in _LISTING}
    return {**kept, "forgotten": [m.id for m in removed], "count": len(removed), "erased": True}


def list_item(memory: Memory) -> dict[str, Any]:
    """A memory as a listing shows it: enough to read and act on, not every field."""
    return {"memory_id": memory.id, "key": memory.key, "content": memory.content, "tags": list(memory.tags),
            "category": memory.category.value, "type": memory.type, "importance": memory.importance,
            "created_at": memory.created_at, "updated_at": memory.updated_at}


def agent_stats_dict(stats: AgentStats) -> dict[str, Any]:
    """One agent's figures (``Engram.visible_stats``), labelled ``"view": "agent"``: every count
    is of what that agent sees (its memories, its session's, global ones), never the store's."""
    return {"view": "agent", "agent": stats.agent, "session": stats.session, "backend": stats.backend,
            "memories": stats.memories, "by_category": stats.by_category, "by_type": stats.by_type,
            "by_scope": stats.by_scope, "links": stats.links, "vectors": stats.vectors,
            "embedding": stats.embedding_identity, "embedding_coverage": stats.embedding_coverage}
