"""A mem0-shaped facade: ``from engram.compat.mem0 import Memory`` instead of ``from mem0 import Memory``.

Same method names, arguments and result shapes as mem0's open-source ``Memory`` (add, search,
get_all, get, update, delete, delete_all, history, reset), over an ``Engram``. How mem0's ids map
(``importers.mem0.owner``, by which ``engram import`` places a mem0 item too, so the facade finds,
updates and deletes what it brought): the *owner* of a memory is its ``user_id``, else its
``agent_id``, else its ``run_id``; the owner
is the engram agent scope it is stored in (``alice`` for a user, ``agent:coach`` and ``run:r1``
for the others, so a user and an agent or run of the same name stay apart; a user id holding
``:`` is refused, as the agents other doors name all have a prefix ending in one: ``lg:`` for a
LangGraph ``EngramStore`` namespace, ``adk:`` and ``agno:`` for those adapters' users), and
owners never see each other's memories. All three ids are kept in the memory's metadata and
narrow every read, as mem0's filters do. Within an owner, each combination of ids keeps its own memories (its keys
carry a digest of the ids beyond the owner): a run never updates, hides or deletes what another
run or agent of the same user said. The facade is the application (as a mem0 ``Memory`` is):
``get``/``update``/``delete``/``history`` take a bare memory id, of any owner, but reach only
memories the facade made. So a call for one owner changes only that owner's memories, but for
one naming a memory by id, which reaches that memory whoever owns it, as in mem0. Ids: a memory
that came from mem0 (``engram import``, ``import_mem0``) goes by the id mem0 gave it, kept at
``metadata["mem0"]["id"]``, in every result, as ``engram export --format mem0`` gives it back; any
other by engram's (``public_id``). The id calls take either (engram's looked up first; mem0's by a
metadata condition the store answers, ``_by_mem0_id``), so an application's stored mem0 ids keep
working after the import and match what ``search`` returns.

With one database per agent (``per_agent_databases``), an owner's memories are in its own
database (``Engram.for_agent``), and an id alone does not say which: the id calls look through
the databases of the home's agents named as the facade names owners (``_databases``: a user's id,
``agent:``/``run:`` and an id), those open already first, none made, until one holds it; ``reset``
goes through the same ones. Looked up, not recorded: a record of which owner holds each id would be
a second account beside the databases, wrong as soon as another door (``engram import``, an
``engram forget``, another process) adds or removes one, where the databases are always right;
the cost is one lookup by id per owner's database (every one is asked: an id two hold names neither, ``_find``).

Differences (docs/integrations.md lists them for users): ``infer=True`` extracts facts with
engram's rule-based extractor unless an ``extractor`` (e.g. ``LLMExtractor``) is given; identical
content for the same owner is stored once; ``history`` is rebuilt from engram's versions and audit trail
(``Engram.audit_of``): an ``UPDATE`` per change of the text or of the metadata alone (the text kept
as ``old_memory`` and ``new_memory``, as mem0 logs it), none for an ``update`` that changed nothing;
a deleted memory's from the audit trail (its ``DELETE`` included, as mem0 keeps it); ``reset``
forgets the memories made through this facade (owners found in the store), not the whole
database; ``filters`` beside the ids are engram's metadata conditions (``engram.where``: mem0's
operators, ``AND``/``OR``/``NOT`` and ``*``); search and get_all return 20 unless ``top_k`` (or
1.x's ``limit``) asks otherwise, as mem0; search scores are
engram's scores (``threshold`` is engram's ``min_relevance``); a missing memory raises
``MemoryNotFoundError`` from ``update``/``delete`` (engram's ``NotFoundError`` and, as mem0's, a
``ValueError``), bad input ``ValidationError`` (a ``ValueError``, as mem0's).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engram import jsondoc
from engram.agent.extract import Fact, FactExtractor, LLMExtractor, RuleExtractor
from engram.aio import AsyncEngram
from engram.audit import AuditEntry
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.foreign_settings import map_mem0_config
from engram.ids import key_from_content, new_id
from engram.importers.base import split_provenance, with_provenance
from engram.importers.mem0 import IDS, KIND, OWNER_PREFIX, PROMOTED, check_user_id, mem0_metadata, owner
from engram.integrations import checked_call
from engram.llm import create_provider
from engram.model import MAX_LIST_LIMIT, MemoryFilter, Scope, draft_changes, parse_relevance
from engram.model import Memory as EngramMemory
from engram.privacy import check_redacted_length
from engram.where import Compare, parse_where

log = logging.getLogger("engram.compat.mem0")

# What search and get_all return without top_k (or 1.x's limit): mem0's default for both since
# its 2.x releases (1.x returned 100).
DEFAULT_TOP_K = 20
# Promoted to the top of a result item, as mem0 does (never in its metadata); ``engram export
# --format mem0`` puts them there too for a memory the facade made (``mem0_fields``). Where a
# memory lives and what sits at the top of its metadata is ``importers.mem0``'s (``owner``,
# ``PROMOTED``): ``engram import`` places a mem0 item by the same rule, so the facade finds it.
_RESERVED = PROMOTED
# The audit trail's reason for what ``reset`` forgot: mem0's reset drops the history too.
_RESET = "mem0 reset"


class MemoryNotFoundError(NotFoundError, ValueError):
    """No memory made through the facade has this id. mem0's ``update`` and ``delete`` raise a
    ``ValueError`` for an unknown id, so a mem0 application catches that: this is one too, and
    engram's ``NotFoundError`` (a ``LookupError``) for code written against engram."""


def _iso(ts: float | None) -> str | None:
    return None if not ts else datetime.fromtimestamp(ts, UTC).isoformat()


def _entity_ids(values: Mapping[str, Any], where: str) -> dict[str, str]:
    """The given user/agent/run ids, trimmed; refuses blanks and whitespace as mem0 does."""
    ids = {}
    for name in IDS:
        value = values.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value.strip()):
            raise ValidationError(name, f"{jsondoc.shown(value)} is not an id", "a non-empty string without spaces")
        if value.strip() == "*":
            raise ValidationError(name, "wildcards are not supported", "the id itself")
        if name == "user_id":
            check_user_id(value)  # a user id naming another door's agent (adk:app:u-7) is refused
        ids[name] = value.strip()
    if not ids:
        raise ValidationError(where, "no user_id, agent_id or run_id given", "at least one of user_id, agent_id, run_id")
    return ids


# (the id's name, the engram agent) owning a memory with these ids: the one mapping, shared with engram import.
_owner = owner


def _unit_key(base: str, ids: Mapping[str, str]) -> str:
    """``base`` for this combination of ids: the ids beyond the owner, when any, add their digest,
    so each combination within an owner keeps its own memories (as mem0's filters separate them)."""
    owner = _owner(ids)
    extra = [f"{k}={ids[k]}" for k in IDS if k in ids and owner and k != owner[0]]
    if not extra:
        return base
    return f"{base[:150]}~{hashlib.sha256(chr(31).join(extra).encode()).hexdigest()[:12]}"


def _as_stored(view: Engram, text: str, field: str, *, as_json: bool = True) -> str:
    """``text`` as ``view`` stores it (``privacy.pii``: redacted under ``redact``, as given
    otherwise). What the facade derives from a text (the facts read in a message, a key, a digest)
    is derived from this, never from the text as given: the engine screens the content it is
    handed but keeps a key as given, so a key made from the text as given carried what ``redact``
    masked (``my-email-alice-example-com``), and a message said again no longer matched its
    stored, redacted copy and was stored a second time. Raises ``ValidationError`` naming
    ``field`` when redaction would make two names of a JSON object in it the same."""
    return view.privacy.screen(text, field=field, as_json=as_json)[0]


def _check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The caller's metadata; the ids are the arguments' to set, never the metadata's."""
    given = dict(metadata or {})
    for name in IDS:
        if name in given:
            raise ValidationError(f"metadata.{name}", "ids are set by the arguments",
                                  f"pass {name}= to the call instead")
    return given


def _stored(own: Mapping[str, Any], origin: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata to store for a memory the caller gave ``own`` (ids included) and that came from
    mem0 with ``origin`` (its mem0 id and hash; empty when made here), as ``engram import`` keeps a
    mem0 item's: engram's entry at ``metadata["mem0"]``, the caller's own ``mem0`` value inside it
    as ``["own"]``, so ``_item`` gives back exactly what was given (``mem0_metadata``)."""
    out = with_provenance(own, KIND, origin, "metadata", [])  # the caller's own mem0 key is no mistake here
    if not out[KIND]:
        del out[KIND]
    return out


def _made_here(memory: EngramMemory) -> bool:
    """Whether the facade stored this memory: it sits in the agent scope its ids name."""
    return _owned(memory.scope, memory.metadata)


def mem0_fields(memory: EngramMemory) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """For a memory the facade made (None for any other): the fields mem0 gives at the top of its
    item (``_RESERVED``: the ids, ``actor_id``, ``role``), which the facade keeps at the top of the
    metadata to filter on, and the metadata as it was given, those and what engram keeps of a mem0
    origin left out (``mem0_metadata``). The facade's results are made of them (``_item``), and
    ``engram export --format mem0`` makes such a memory's item of them, so the ids come back where
    mem0 has them, not as metadata keys mem0's item never held."""
    return _promoted(memory) if _made_here(memory) else None


def _promoted(memory: EngramMemory) -> tuple[dict[str, Any], dict[str, Any]]:
    """The memory's ``_RESERVED`` metadata and the rest of it as it was given (``mem0_fields``)."""
    given = mem0_metadata(memory)[0]
    return ({k: given[k] for k in _RESERVED if k in given}, {k: v for k, v in given.items() if k not in _RESERVED})


def _owned(scope: Scope, metadata: Mapping[str, Any]) -> bool:
    owner = _owner(metadata)
    return scope.kind == "agent" and owner is not None and scope.agent == owner[1]


def _event(memory_id: str, n: int, old: str | None, new: str | None, at: float | None, created: float,
           metadata: Mapping[str, Any]) -> dict[str, Any]:
    """One entry of ``history`` in mem0's shape: each entry's ``created_at`` is the memory's, its
    ``updated_at`` the time of the change (none for the ``ADD``)."""
    return {
        "id": f"{memory_id}:{n}", "memory_id": memory_id, "old_memory": old, "new_memory": new,
        "event": "UPDATE" if n else "ADD", "created_at": _iso(created), "updated_at": _iso(at),
        "is_deleted": False, "actor_id": metadata.get("actor_id"), "role": metadata.get("role"),
    }


def _events(memory_id: str, first: str, changes: Sequence[tuple[float, str | None]], created: float,
            metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``history``'s entries for a memory stored with the text ``first`` and changed by ``changes``,
    oldest first: each (when, its new text), the text None for a change of the metadata alone,
    whose ``UPDATE`` gives the text it kept as both ``old_memory`` and ``new_memory``."""
    entries = [_event(memory_id, 0, None, first, None, created, metadata)]
    content = first
    for at, text in changes:
        new = content if text is None else text
        entries.append(_event(memory_id, len(entries), content, new, at, created, metadata))
        content = new
    return entries


def _metadata_only(row: AuditEntry) -> bool:
    """Whether an audit row is an update of the metadata that kept the text (one that changed the
    text is an ``UPDATE`` through the text; one of another field alone, such as engram's
    importance, is no change mem0 knows of). A row written before updates named what they changed
    says nothing, and counts as none."""
    changed = row.detail.get("changed", ()) if row.action == "updated" and row.detail else ()
    return "metadata" in changed and "content" not in changed


def _held(view: Engram, key: str) -> EngramMemory | None:
    """The memory the facade made under ``key`` in ``view``'s own scope, or None: a global memory
    with that key, or one of the engram agent's own, is not the facade's to change (a fresh import
    keeps it and takes another key, as ``engram import`` does)."""
    try:
        memory = view.get_by_key(key)
    except NotFoundError:
        return None
    return memory if memory.scope == view.scope and _made_here(memory) else None


def _as_imported(view: Engram, record: Any, content: str, held: EngramMemory) -> dict[str, Any]:
    """``update``'s arguments that bring ``record`` (an item newer than ``held``, the memory an
    import made of it) to that memory: what importing it fresh would give, its text, metadata
    (mem0's fields kept as ``_stored`` keeps them), and the valid time the import gives it
    (``valid_until`` from mem0's ``expiration_date``, the start by
    ``importers.apply.imported_valid_from``), a field the item leaves empty cleared (not the
    related entity and search context: engram's, which mem0 has none for, brought only from an item's
    ``engram`` entry, else kept as set in engram); but for its
    tags, ``engram import``'s rule (``importers.apply.refreshed_tags``): mem0's categories in
    place of those the last import brought, a tag added in engram since kept (both together past
    ``MAX_TAGS``: ``SnapshotError`` naming the item's field, ``results[0].categories``). What the import
    brought (the text's digest, the categories) is recorded as ``engram import`` records it
    (``importers.apply.with_imported``), so either door reads it. ``content`` is the text as stored.
    The memory keeps its id, key and creation time; its update time is the write's (the engine
    stamps every update with its clock; only a new memory takes the item's)."""
    from engram.importers.apply import imported_valid_from, refreshed_tags, with_imported

    fields: dict[str, Any] = {
        "content": record.content, "category": record.category, "type": record.type,
        "importance": record.importance, "tags": refreshed_tags(held, record, record.tags, KIND),
        "metadata": with_imported(record.metadata, record, KIND, content), "source": KIND,
        "valid_from": imported_valid_from(view, record, content), "valid_until": record.valid_until,
    }
    # Cleared, not left out: update keeps a field it is not given, and reads valid_from from the text.
    cleared = [name for name, value in fields.items() if value is None]
    # engram's own fields, which mem0 has none for: an item brings them only when its engram entry
    # carries them (engram's own mem0 export), else the memory keeps those set in engram, as engram
    # import keeps them.
    fields |= {name: value for name, value in (("related_entity", record.related_entity),
                                               ("search_context", record.search_context)) if value is not None}
    return {name: value for name, value in fields.items() if value is not None} | {"clear": cleared}


def _changes(view: Engram, memory: EngramMemory, fields: Mapping[str, Any]) -> bool:
    """Whether ``update(memory, **fields)`` (``_as_imported``'s arguments) would change ``memory``:
    the draft that update writes (``Engram._updating``, the write ``engram import`` makes its
    refreshes with), asked as every store asks (``model.draft_changes``). Asked before the write
    because an update that changes nothing still counts as a use of the memory (its
    ``last_accessed``): a newer item bringing nothing new makes no write, as ``engram import``
    makes none."""
    given = {name: value for name, value in fields.items() if name != "clear"}
    return draft_changes(memory, view._updating(memory, given, fields["clear"]).draft)


def _count(top_k: int | None, limit: int | None) -> tuple[str, int]:
    """The result count asked for and the argument that asked (for errors): mem0's ``top_k``
    wins over 1.x's ``limit``, and without either mem0's default (``DEFAULT_TOP_K``); 0 asks for
    nothing (as in mem0)."""
    name, value = ("top_k", top_k) if top_k is not None else ("limit", DEFAULT_TOP_K if limit is None else limit)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(name, f"{jsondoc.shown(value)} is not a count", "an integer >= 0")
    return name, value


def public_id(memory: EngramMemory) -> str:
    """The id the facade gives a memory it made (its results' ``id``, ``history``'s ``memory_id``):
    the id mem0 gave it, kept at ``metadata["mem0"]["id"]`` by ``engram import`` or ``import_mem0``
    (the one ``engram export --format mem0`` gives back too), else engram's. One rule, so an
    application that kept mem0's ids in its own tables finds the same ids in ``search`` and
    ``get_all`` as it stored; the id calls take either (``Memory._find``)."""
    return _mem0_id(memory.source, memory.metadata) or memory.id


def _mem0_id(source: str | None, metadata: Mapping[str, Any]) -> str | None:
    """The id mem0 gave a memory of this ``source`` and ``metadata`` (``mem0_metadata``'s origin
    ``id``), or None: read from a stored memory or from the forget row that keeps one whole."""
    origin = split_provenance(metadata, KIND)[1].get("id") if source == KIND else None
    return origin if isinstance(origin, str) and origin else None


def _item(memory: EngramMemory, score: float | None = None, details: Any = None) -> dict[str, Any]:
    """A memory the facade made in mem0's result shape: ids promoted to the top, other metadata
    under ``metadata`` as it was given (``mem0_fields``), its id ``public_id``'s."""
    top, extra = _promoted(memory)
    item: dict[str, Any] = {
        "id": public_id(memory),
        "memory": memory.content,
        "hash": hashlib.md5(memory.content.encode()).hexdigest(),  # noqa: S324 - a content fingerprint, as mem0's
        "metadata": extra or None,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
    }
    if score is not None:
        item["score"] = score
    if details is not None:
        item["score_details"] = dataclasses.asdict(details)
    item.update(top)
    return item


class Memory:
    """mem0's ``Memory`` API over engram. ``Memory()`` opens the configured engram store
    (``Engram.from_settings()``); pass ``engram=`` to use one you built."""

    @checked_call("{owner}(), {owner}(mem), or {owner}.from_config(config)")
    def __init__(self, engram: Engram | AsyncEngram | None = None, *, extractor: FactExtractor | None = None) -> None:
        """``engram``: the engine (an ``AsyncEngram``'s is used) whose store holds the memories;
        ``extractor``: what turns ``add(infer=True)``'s messages into facts (an object with
        ``extract``, as ``engram.agent.extract``'s). Raises ``ValidationError`` naming either when
        it is not one, before any store is opened (a path given as ``engram`` failed at the first
        call, as an ``AttributeError``)."""
        if isinstance(engram, AsyncEngram):
            engram = engram.engram
        if engram is not None and not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}",
                                  "an Engram or AsyncEngram, or None (the configured store)")
        if extractor is not None and not callable(getattr(extractor, "extract", None)):
            raise ValidationError("extractor", f"got {type(extractor).__name__}",
                                  "a fact extractor (engram.agent.extract's RuleExtractor or LLMExtractor), or None")
        self.engram = engram if engram is not None else Engram.from_settings()
        self.extractor = extractor if extractor is not None else RuleExtractor()

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Open engram from a mem0 config, as mem0's ``Memory.from_config`` takes it: ``embedder``
        and ``llm`` become engram's ``embeddings`` and ``llm`` where engram has the provider (the
        LLM then extracts the facts of ``add(infer=True)``, as in mem0); ``vector_store``,
        ``graph_store``, ``history_db_path`` and mem0's other settings are left aside with a
        warning naming each (``foreign_settings.map_mem0_config``). Other keys are engram's
        settings (``path``, ``backend``, ``database_url``, ``embeddings``...). Nothing is called
        over the network that the config does not name."""
        if not isinstance(config_dict, Mapping):
            raise ValidationError("config", f"got {type(config_dict).__name__}", "a dict of mem0 or engram settings")
        settings, uses_llm = map_mem0_config(config_dict)
        engram = Engram.from_settings(**settings)
        if not uses_llm:
            return cls(engram)
        try:
            provider = create_provider(engram.settings.llm) if engram.settings is not None else None
        except BaseException:
            engram.close()
            raise
        if provider is None:  # an llm section saying provider "none"
            return cls(engram)
        temperature = engram.settings.llm.temperature  # type: ignore[union-attr]
        return cls(engram, extractor=LLMExtractor(provider, temperature=0.0 if temperature is None else temperature))

    # --- scopes ---------------------------------------------------------------------------------
    def _view(self, ids: Mapping[str, str], *, reading: bool = False) -> Engram:
        """The owner's view; ``reading``: the call only reads, so an owner with no database yet
        (one per agent) gets none made (``Engram.for_agent``)."""
        name, agent = _owner(ids)  # type: ignore[misc]  # _entity_ids made sure there is one
        try:
            return self.engram.for_agent(agent, origin="mem0", reading=reading)
        except ValidationError as exc:
            raise ValidationError(name, exc.problem, exc.allowed) from None

    def _databases(self) -> list[tuple[Engram, str | None]]:
        """The databases that may hold a memory the facade made, each as a view on it and the one
        engram agent it holds (None: the one database of every agent). With one database per agent,
        every agent with a database in the home named as the facade names owners (a user's id, which
        holds no ':', or ``agent:``/``run:`` and an id), those open already first; none is made."""
        databases, settings = self.engram.agent_databases, self.engram.settings
        if databases is None or settings is None:
            return [(self.engram, None)]
        from engram.agent_databases import agents_with_databases

        owners = [agent for agent in agents_with_databases(settings)
                  if ":" not in agent or agent.startswith((OWNER_PREFIX["agent_id"], OWNER_PREFIX["run_id"]))]
        owners.sort(key=lambda agent: not databases.is_open(agent))  # stable: folder order within each
        return [(self.engram.for_agent(agent, origin="mem0", reading=True), agent) for agent in owners]

    def _find(self, memory_id: str) -> tuple[EngramMemory, Engram]:
        """The memory with this id, whichever owner holds it, and a view of its owner (on its own
        database, with one per agent: ``_databases``); only memories the facade made (never an
        engram agent's own). The id is engram's, or the id mem0 gave a memory imported from it
        (``public_id``), which an application that kept mem0's ids calls with: engram's is looked
        up first in every database, then mem0's (``_by_mem0_id``).

        Every owner is asked, not the first that answers: an id held by more than one memory the
        facade made (a mem0 id is a value of the metadata, which any door writing to an owner's
        agent may set; with one database per agent, an earlier release's snapshot import could keep an engram
        id in two) names none of them, and is refused (``ValidationError`` naming ``memory_id``).
        Taking the first found let an agent that set another owner's mem0 id on a memory of its
        own receive what ``update`` meant for that owner, be read in its place by ``get`` and be
        deleted in its place by ``delete``."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("memory_id", f"{jsondoc.shown(memory_id)} is not a memory id", "an id from add/get_all/search")
        databases = self._databases()
        found = [m for database, agent in databases for m in database.store.get_many([memory_id])
                 if _made_here(m) and (agent is None or m.scope.agent == agent)]
        if not found:
            found = [m for database, agent in databases for m in _by_mem0_id(database, agent, memory_id)]
        if not found:
            raise MemoryNotFoundError("memory", memory_id)
        if len(found) > 1:
            raise ValidationError("memory_id", f"{jsondoc.shown(memory_id)} is the id of {len(found)} memories of the "
                                  "facade, so it names none of them (nothing read or changed)",
                                  "an id one memory of the facade holds (a mem0 id is one memory's: forget the memory "
                                  "that should not hold it)")
        return found[0], self.engram.for_agent(found[0].scope.agent or "default", origin="mem0")

    @staticmethod
    def _narrow(ids: Mapping[str, str], filters: Mapping[str, Any] | None) -> Filters:
        """The ids as equality, the rest of mem0's ``filters`` as engram's metadata condition: the
        same language (``engram.where``), checked here so an error names ``filters...``."""
        rest = {key: value for key, value in (filters or {}).items() if key not in IDS}
        parse_where(rest, "filters")
        return Filters(metadata=dict(ids), where=rest or None)

    @staticmethod
    def _ids(given: Mapping[str, Any], filters: Mapping[str, Any] | None, where: str) -> dict[str, str]:
        merged = {k: v for k, v in (filters or {}).items() if k in IDS}
        merged.update({k: v for k, v in given.items() if v is not None})
        return _entity_ids(merged, where)

    # --- mem0's methods -------------------------------------------------------------------------
    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        timestamp: Any = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Store memories from a message, or a conversation (``[{"role", "content"}, ...]``).

        ``infer=True`` stores the facts the extractor finds in the user's messages (saying the same
        thing again, or changing it, with the same ids updates the fact: event ``UPDATE``);
        ``infer=False`` stores each non-system message as it is, with its ``role`` (and its
        ``name`` as ``actor_id``). Returns ``{"results": [{"id", "memory", "event"}, ...]}``."""
        ids = _entity_ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, "add")
        for name, value in (("memory_type", memory_type), ("prompt", prompt)):
            if value is not None:
                raise ValidationError(name, "procedural memories and custom prompts need mem0's LLM pipeline",
                                      "leave it unset")
        if timestamp is not None:
            raise ValidationError("timestamp", "is a mem0 Platform feature (mem0's open-source Memory refuses it too)",
                                  "leave it unset")
        given = _messages(messages)
        base = {**_check_metadata(metadata), **ids}
        view = self._view(ids)
        # Every message screened before anything is read from it or stored (_as_stored): the facts
        # extracted from it too (read from the text as given, "alice@example.com" came out as
        # "alice@example.", which no detector finds), and refused, all or nothing, when a message
        # stored as it is would fit max_content_chars only as given.
        conversation = [m | {"content": _as_stored(view, m["content"], f"messages[{i}].content")}
                        for i, m in enumerate(given)]
        if not infer:
            for i, (before, after) in enumerate(zip(given, conversation, strict=True)):
                check_redacted_length(f"messages[{i}].content", before["content"], after["content"], view.max_content_chars)
        results = []
        for i, message in enumerate(conversation):
            role = message["role"]
            if role == "system" or (infer and role != "user"):
                continue
            if not infer:
                extra = {"role": role} | ({"actor_id": message["name"]} if "name" in message else {})
                written = [self._store_message(view, message["content"], ids, _stored({**base, **extra}, {}))]
            else:
                reply = next((m["content"] for m in conversation[i + 1:] if m["role"] == "assistant"), "")
                written = [self._store_fact(view, fact, ids, _stored(base, {}))
                           for fact in self.extractor.extract(message["content"], reply, source="mem0")]
            for result in written:
                if result.action not in ("created", "updated"):
                    continue
                entry = {"id": public_id(result.memory), "memory": result.memory.content,
                         "event": "ADD" if result.action == "created" else "UPDATE"}
                if not infer:
                    entry |= {"actor_id": result.memory.metadata.get("actor_id"), "role": role}
                if metadata:
                    entry["metadata"] = dict(metadata)
                results.append(entry)
        return {"results": results}

    @staticmethod
    def _store_fact(view: Engram, fact: Fact, ids: Mapping[str, str], metadata: dict[str, Any]) -> Any:
        """An extracted fact stored under its slot key (or one made from its text) for this combination
        of ids. Read from screened messages, a fact holds no PII; one a custom extractor adds (an LLM
        may spell out what the message masked) is screened before its key is made, as the message was,
        and a slot key holding PII is dropped for one made from the fact as stored (``PiiPolicy.proposed_key``)."""
        content = _as_stored(view, fact.content, "content")
        key = view.privacy.proposed_key(fact.key) or key_from_content(content)
        return view.remember(content, key=_unit_key(key, ids), type=fact.type, metadata=metadata, source=KIND)

    @staticmethod
    def _store_message(view: Engram, content: str, ids: Mapping[str, str], metadata: dict[str, Any]) -> Any:
        """A message (screened: ``_as_stored``) stored as it is, once per combination of ids: the owner
        alone relies on engram's own duplicate check; a combination keys the content, and takes a
        fresh key when the memory under it was since changed by ``update`` (so it is never overwritten)."""
        if _unit_key("", ids) == "":
            return view.remember(content, metadata=metadata, source=KIND)
        key = _unit_key(f"{key_from_content(content)}-{hashlib.sha256(content.encode()).hexdigest()[:10]}", ids)
        stored = view.find(key)
        if stored is not None and stored.content != content:
            key = f"{key}-{new_id()[-12:]}"
        return view.remember(content, key=key, metadata=metadata, source=KIND)

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, or None."""
        try:
            memory, _ = self._find(memory_id)
        except NotFoundError:
            return None
        return _item(memory) | {"score": None}  # mem0's get gives its item's every field, score too

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The owner's memories, newest first, ``top_k`` of them (default 20, as mem0); ids as
        arguments (mem0 1.x) or in ``filters`` (mem0's way now), with metadata conditions beside
        them (``engram.where``: mem0's operators)."""
        ids = self._ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters, "get_all")
        name, count = _count(top_k, limit)
        narrow = self._narrow(ids, filters)
        if not count:
            return {"results": []}
        try:
            memories = self._view(ids, reading=True).list(narrow, limit=count, scope="agent")
        except ValidationError as exc:
            raise ValidationError(name, exc.problem, exc.allowed) if exc.field == "limit" else exc from None
        return {"results": [_item(m) for m in memories]}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The owner's ``top_k`` memories (default 20, as mem0) most relevant to ``query``, best
        first, each with its ``score`` (and, with ``explain=True``, ``score_details``: the parts of
        engram's score); ``filters`` as ``get_all`` takes them. ``rerank``
        changes nothing: engram's recall is the ranking (as mem0 without a configured reranker)."""
        ids = self._ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters, "search")
        if reference_date is not None:
            raise ValidationError("reference_date", "is a mem0 Platform feature (mem0's open-source Memory refuses it too)",
                                  "leave it unset")
        name, count = _count(top_k, limit)
        if threshold is not None:
            threshold = parse_relevance(threshold, "threshold")  # as mem0, which refuses one outside 0-1
        narrow = self._narrow(ids, filters)
        if not count:
            return {"results": []}
        try:
            # The owner's own scope, as get_all reads: a global memory (every engram agent's to read)
            # is never one the facade made, whatever user_id its metadata carries.
            result = self._view(ids, reading=True).recall(query, limit=count, filters=narrow, min_relevance=threshold,
                                                          scope="agent")
        except ValidationError as exc:
            raise ValidationError(name, exc.problem, exc.allowed) if exc.field == "limit" else exc from None
        return {"results": [_item(hit.memory, hit.score, hit.parts if explain else None) for hit in result]}

    def update(self, memory_id: str, data: str, metadata: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Replace a memory's text (the old text goes to its history); ``metadata`` is merged in."""
        extra = _check_metadata(metadata)
        memory, view = self._find(memory_id)
        own, origin = mem0_metadata(memory)
        view.update(memory, content=data, metadata=_stored({**own, **extra}, origin) if memory.source == KIND
                    else {**memory.metadata, **extra})
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        memory, view = self._find(memory_id)
        view.forget(memory, reason="mem0 delete")
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Forget every memory with these ids (at least one is required; ``reset`` forgets all)."""
        ids = _entity_ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, "delete_all")
        # Only the owner's memories (its own database, with one per agent); an owner with none yet
        # has nothing to forget, and gets no database made.
        view = self._view(ids, reading=True)
        for memory in _every(view, self._narrow(ids, None)):
            view.forget(memory, reason="mem0 delete_all")
        return {"message": "Memories deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes, oldest first, in mem0's shape (``old_memory``, ``new_memory``,
        ``event``): ``ADD``, an ``UPDATE`` per change of its text or of its metadata alone (the text
        as both ``old_memory`` and ``new_memory``, as mem0 logs an ``update`` that kept the text),
        and, once it is deleted, a ``DELETE`` (``is_deleted``), as mem0 keeps them. A stored
        memory's text changes come from its versions; the rest from the audit trail, engram's
        record of what changed and was forgotten (none when ``lifecycle.audit`` was off, or when
        ``reset`` forgot it: mem0's reset drops its history)."""
        try:
            memory, view = self._find(memory_id)
        except NotFoundError:
            return self._history_of_deleted(memory_id)
        earlier = view.versions(memory)
        contents = [v.content for v in earlier] + [memory.content]
        # Versions keep every change of the text, whatever lifecycle.audit says; a change of the
        # metadata alone leaves none, so the trail's record of it is read beside them.
        changes: list[tuple[float, str | None]] = [(v.replaced_at, contents[n + 1]) for n, v in enumerate(earlier)]
        changes += [(row.at, None) for row in view.audit_of(memory.id, every_agent=True)  # its database's trail
                    if _metadata_only(row)]
        changes.sort(key=lambda change: change[0])
        return _events(public_id(memory), contents[0], changes, memory.created_at, memory.metadata)

    def _history_of_deleted(self, memory_id: str) -> list[dict[str, Any]]:
        """The events of a memory the facade made and that is gone, from the audit rows about it
        (every owner's: the facade is the application, as for ``get``). The id is engram's, looked
        up first in every database as ``_find`` looks, or mem0's: the trail keeps a forgotten memory
        whole, its metadata and so its mem0 id too, and the rows of the one that held it are found
        through it (``audit_log_mem0_id``: ``AuditLog.forgotten_by_origin_id``)."""
        if not isinstance(memory_id, str) or not memory_id:
            return []
        databases = self._databases()
        for database, agent in databases:  # each database keeps the trail of its own memories
            rows = database.audit_of(memory_id, every_agent=True)
            gone = _last_forget(rows)
            if gone is not None:
                return self._events_of_deleted(rows, gone) if _deleted_here(gone, agent) else []
        for database, agent in databases:
            deleted = []
            for engram_id, scope in database.backend.audit_log().forgotten_by_origin_id(KIND, memory_id):
                if not _named_as_owner(scope):
                    continue  # an engram agent's own memory, or global: never the facade's
                rows = database.audit_of(engram_id, every_agent=True)
                gone = _last_forget(rows)
                if gone is not None and _deleted_here(gone, agent) and _gone_public_id(gone) == memory_id:
                    deleted.append((gone.at, rows, gone))
            if deleted:  # the latest forget, should a mem0 id have been brought and deleted twice
                _, rows, gone = max(deleted, key=lambda found: found[0])
                return self._events_of_deleted(rows, gone)
        return []

    @staticmethod
    def _events_of_deleted(rows: Sequence[AuditEntry], gone: AuditEntry) -> list[dict[str, Any]]:
        """``history``'s entries from the audit ``rows`` about a memory, ``gone`` its forget; each
        names the memory by the id the facade gave it (``public_id``: mem0's, for one from mem0)."""
        memory_id = _gone_public_id(gone)
        created, metadata = gone.detail["created_at"], gone.detail["metadata"]
        # Its first text is its store's (or, stored while the trail was off, its first update's).
        first: str | None = None
        content: str | None = None
        changes: list[tuple[float, str | None]] = []
        for row in rows:
            if not row.detail or row.action not in ("stored", "imported", "updated"):
                continue
            if first is None:
                first = content = row.detail["content"]
            elif row.action == "updated" and row.detail["content"] != content:
                content = row.detail["content"]
                changes.append((row.at, content))
            elif _metadata_only(row):
                changes.append((row.at, None))
        entries = [] if first is None else _events(memory_id, first, changes, created, metadata)
        last = _event(memory_id, len(entries), gone.detail["content"], None, gone.at, created, metadata)
        return [*entries, last | {"event": "DELETE", "is_deleted": True}]

    def import_mem0(self, document: str | Mapping[str, Any] | Sequence[Any]) -> dict[str, int]:
        """Bring memories exported from mem0 (``get_all``'s JSON, a bare list, or the platform's
        ``{"memories": [...]}``) into this facade, each where ``add`` would have put it: its owner's
        agent, its ids in its metadata, keyed for its combination of ids; its times and categories
        (as tags) are kept; mem0's id and hash, and the platform's fields engram has no field for
        (``owner``, ``organization``, ``structured_attributes``, ...: ``importers.mem0.KEPT``), under
        ``metadata["mem0"]``, as ``engram import`` keeps them: left out of results (mem0's
        open-source ``Memory`` gives none of them), given back by ``engram export --format mem0``.
        An item's own ``metadata["mem0"]`` is kept inside, as ``["own"]``, with a warning logged;
        results give the item's metadata back as it was, an ``engram`` entry in it included
        (``engram.importers.mem0`` states that rule). Not a mem0 method: the way
        a mem0 application keeps its memories when switching (``engram import`` places them the
        same way, under the same ids). Every item is checked before any is stored;
        importing the same export again stores nothing.

        An item the facade holds (the memory an earlier import made of it, found by the ids an
        import gives it, whatever its text now; else the facade's memory under its key in its
        owner's scope) updates that memory when the item is newer than it (``importers.apply.newer_than``,
        as ``engram import`` decides) and brings a change (``_changes``: one bringing nothing new makes
        no write, not even the use an unchanged update counts, and is counted skipped): to what
        importing the item fresh gives (``_as_imported``: its text, metadata, valid time), the
        memory's id, key and creation time kept, its update time the write's (the engine stamps
        updates with its clock); its tags as ``engram import`` refreshes them
        (mem0's categories in place of those the last import brought; a tag added in engram since
        stays). The text is mem0's even when it was changed in engram before mem0's change: the
        facade's memories are its mem0 application's, and the newer item is mem0's latest word on
        it (the edit stays in the memory's versions; ``engram import`` keeps such an edit instead,
        as engram's word). Each import records what it brought as ``engram import`` records it (the
        text's digest and the categories, in ``metadata["mem0"]`` beside mem0's id, hash and ids:
        ``importers.apply.with_imported``), so the facade and ``engram import --from mem0`` can
        bring exports to the same memories in turn, either first. The others are stored through the shared import code
        (``engram.importers.apply``), all or nothing, each with the id derived from mem0's id and
        its owner: so a memory deleted or forgotten since an earlier import (the audit trail's
        record, ``Engram.forgotten``) is not brought back, as ``engram import`` leaves it out; a
        warning is logged. A memory of the owner agent under that id that the facade did not make
        (one an earlier build's ``engram import`` made of the same item, its ids in ``metadata["mem0"]``
        alone, until ``engram import`` runs again) is left as it stands. Returns ``{"imported", "skipped",
        "forgotten"}``."""
        from engram.importers import mem0 as mem0_export
        from engram.importers.apply import apply_plan, newer_than
        from engram.importers.base import Plan

        text = document if isinstance(document, str) else json.dumps(document)
        plan = mem0_export.read(text)  # malformed input: ValidationError naming the item's field
        checked = []
        for record in plan.records:
            # The metadata as ``engram import`` stores it, which is the facade's layout: the item's
            # own, its ids, actor_id and role at the top (``importers.mem0.PROMOTED``, an id in the
            # item's own metadata refused), and what the import keeps of the origin (mem0's id, hash
            # and ids, the platform's owner, organization, ...: ``importers.mem0.KEPT``) at
            # ``metadata["mem0"]``: the two doors write the same memory, and neither finds a change in
            # what the other brought (the mem0 export gives it back).
            metadata = dict(record.metadata)
            try:
                # The ids as the facade takes them (stricter than engram import, which names an agent
                # for an id that is no valid name as it is): the owner's view is where add puts them.
                ids = _entity_ids({name: metadata.get(name) for name in IDS}, "user_id")
                view = self._view(ids)
                content = _as_stored(view, record.content, "content")
                key = _unit_key(key_from_content(content), ids)
                # Checked as remember checks it (content, key, tags, metadata) before the first item
                # is stored: an item remember would refuse stores nothing of the export. Not its times:
                # an import keeps its source's times as given (``importers.apply``, which stores the
                # fresh items below: ``record_times``), a future one too, where remember refuses a
                # creation after now; the facade and ``engram import`` give an item the same times.
                view.check_remember(record.content, key=key, tags=record.tags, metadata=metadata, source=KIND)
            except ValidationError as exc:
                raise ValidationError(record.where + record.fields.get(exc.field, f".{exc.field}"), exc.problem,
                                      exc.allowed) from None
            checked.append((dataclasses.replace(record, key=key, metadata=metadata, agent=view.scope.agent or "default",
                                                session=None), view, content))
        held, taken = self._imported(checked)
        # New to the facade, by owner agent and key: a later item of the export with the same key
        # is the one kept, as storing them in turn by key would leave it.
        fresh: dict[tuple[str, str], Any] = {}
        writes = []
        for record, view, content in checked:
            # The memory an earlier import made of this very item (its text changed since or not),
            # else the one the facade holds under the item's key.
            memory = held.get((record.agent, record.source_id)) or _held(view, record.key)
            if memory is None and (record.agent, record.source_id) not in taken:
                fresh[(record.agent, record.key)] = record
            # Only an item newer than the memory (``engram import``'s rule, one function): importing an
            # export again must not undo an ``update`` made through the facade since (the item's key
            # comes from its content, which the update changed, so storing it by key would put the
            # old content back).
            # Nor when the newer item brings nothing the memory lacks (mem0 touched it, say): no
            # write, counted skipped, as engram import counts it (``_changes``).
            elif memory is not None and newer_than(record, memory):
                fields = _as_imported(view, record, content, memory)
                if _changes(view, memory, fields):
                    writes.append((view, memory, fields))
        # In the facade's places: the records its own items would be, mem0's links left aside (as add does).
        # New memories only (a memory another door made of an item, ``taken``, is left as it stands,
        # counted skipped; the facade brings newer items itself, above), each marked ``refresh`` as
        # ``engram import`` marks it, so the import records what it brought (``with_imported``).
        placed = Plan(KIND, KIND, records=list(fresh.values()))
        importer = self.engram.for_agent(self.engram.scope.agent or "default", origin=KIND)
        summary = apply_plan(importer, placed, keep_agents=True, operator_notes=False)
        for warning in (*plan.warnings, *summary.warnings):  # an item's own metadata.mem0; forgotten ones
            log.warning("mem0 import: %s", warning)
        imported = summary.imported
        for view, memory, fields in writes:
            imported += view.update(memory, **fields).action == "updated"
        return {"imported": imported, "skipped": len(plan.records) - imported - summary.forgotten,
                "forgotten": summary.forgotten}

    def _imported(self, checked: Sequence[tuple[Any, Engram, str]]
                  ) -> tuple[dict[tuple[str, str], EngramMemory], set[tuple[str, str]]]:
        """The memories earlier imports made of these records, by (owner agent, mem0 id): found by the
        ids an import gives a record (``importers.apply.imported_ids``), in one read per owner (in its own
        database, with one per agent), so an item
        exported again with its text changed (and so its key) is that memory still. Only the facade's
        own, in the owner's scope; beside them, the records whose id a memory of the owner agent the
        facade did not make holds (an earlier build's ``engram import`` may have put one there): not
        stored again, and not changed."""
        from engram.importers.apply import imported_ids

        candidates = {(record.agent, record.source_id): imported_ids(KIND, record, record.agent)
                      for record, _, _ in checked}
        # Read in each owner's view: with one database per agent, its memories are in its own file.
        views = {record.agent: view for record, view, _ in checked}
        found: dict[str, EngramMemory] = {}
        for agent, view in views.items():
            asked = [i for (owner, _), ids in candidates.items() if owner == agent for i in ids]
            found |= {m.id: m for m in view.store.get_many(asked) if m.scope.agent == agent}
        out, taken = {}, set()
        for (agent, source_id), ids in candidates.items():
            mine = [found[i] for i in ids if i in found and found[i].scope.agent == agent]
            memory = next((m for m in mine if _made_here(m) and m.scope.session is None), None)
            if memory is not None:
                out[(agent, source_id)] = memory
            elif mine:
                taken.add((agent, source_id))
        return out, taken

    def reset(self) -> None:
        """Forget every memory made through this facade, of every owner in the store (with one
        database per agent, in every owner's database: ``_databases``)."""
        for database, agent in self._databases():
            for scope_text in database.stats().by_scope:
                scope = Scope.parse(scope_text)
                if scope.kind != "agent" or scope.agent is None or agent not in (None, scope.agent):
                    continue
                view = self.engram.for_agent(scope.agent, origin="mem0")
                for memory in _every(view):
                    if _made_here(memory):
                        view.forget(memory, reason=_RESET)

    def close(self) -> None:
        self.engram.close()


def _messages(messages: Any) -> list[dict[str, str]]:
    """mem0's accepted shapes: a string (one user message), one message dict, or a list of them;
    a message's ``name`` (who spoke) is kept."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list | tuple):
        raise ValidationError("messages", f"got {type(messages).__name__}", "a string, a message dict or a list of them")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise ValidationError(f"messages[{i}]", "needs a 'content' string", '{"role": "user", "content": "..."}')
        role = message.get("role", "user")
        if role not in ("user", "assistant", "system"):
            raise ValidationError(f"messages[{i}].role", f"unknown role {jsondoc.shown(role)}", ["user", "assistant", "system"])
        name = message.get("name")
        if name is not None and not isinstance(name, str):
            raise ValidationError(f"messages[{i}].name", f"got {type(name).__name__}", "the speaker's name, a string")
        out.append({"role": role, "content": message["content"]} | ({"name": name} if name else {}))
    return out


def _by_mem0_id(database: Engram, agent: str | None, mem0_id: str) -> list[EngramMemory]:
    """The memories the facade made whose mem0 id (``metadata["mem0"]["id"]``: ``public_id``) is
    ``mem0_id``, in ``database`` (of ``agent`` alone, None: of every agent): one, unless another
    door set that id on a memory of an owner (``Memory._find`` refuses the id then). Asked of the
    store as a metadata condition (``where.Compare`` down the path ``mem0`` -> ``id``), in the
    agent scopes named as the facade names owners (``_mem0_id_filter``): the store seeks it through
    the index ``memories_mem0_id`` (schema steps 0015 on SQLite, 0020 on PostgreSQL), the facade
    reads only the one it finds; engram's id is looked up first.
    A memory another door put in an owner's agent is not the facade's (``_made_here``), nor one of
    another owner than its ids name: no owner reaches another's by it, as by engram's id."""
    # One database per agent holds its agent's; the shared one names its agents in its figures.
    scopes = [Scope(agent)] if agent is not None else [
        Scope.parse(scope) for scope in database.stats().by_scope if _named_as_owner(scope)]
    if not scopes:
        return []
    found = database.store.list(_mem0_id_filter(scopes, mem0_id), limit=MAX_LIST_LIMIT)
    return [m for m in found if m.source == KIND and _made_here(m)]


def _mem0_id_filter(scopes: Sequence[Scope], mem0_id: str) -> MemoryFilter:
    """What ``_by_mem0_id`` asks the store for: the memories of ``scopes`` whose
    ``metadata["mem0"]["id"]`` is ``mem0_id``. An equality with a string down that path, which the
    stores' SQL writes as the expression ``memories_mem0_id`` indexes (``store.where_sql``)."""
    return MemoryFilter(scopes=tuple(scopes), where=Compare(KIND, "eq", mem0_id, within=("id",)))


def _named_as_owner(scope: str | None) -> bool:
    """Whether ``scope`` (``str(Scope)``) is an agent scope named as the facade names owners (a
    user's id, or ``agent:``/``run:`` and an id): the only ones whose trail the facade reads."""
    parsed = None if scope is None else Scope.parse(scope)
    return (parsed is not None and parsed.kind == "agent" and parsed.agent is not None
            and (":" not in parsed.agent or parsed.agent.startswith((OWNER_PREFIX["agent_id"], OWNER_PREFIX["run_id"]))))


def _last_forget(rows: Sequence[AuditEntry]) -> AuditEntry | None:
    """The latest forget among a memory's audit ``rows`` (oldest first) that kept the memory whole."""
    return next((row for row in reversed(rows) if row.action == "forgotten" and row.detail), None)


def _deleted_here(gone: AuditEntry, agent: str | None) -> bool:
    """Whether ``gone`` (a forget row, the memory whole in its detail) is of a memory the facade made,
    in the database of ``agent`` (None: the one of every agent), and not one ``reset`` forgot (mem0's
    reset drops the history too)."""
    scope = Scope.parse(gone.detail["scope"])  # type: ignore[index]
    return gone.reason != _RESET and _owned(scope, gone.detail["metadata"]) and agent in (None, scope.agent)  # type: ignore[index]


def _gone_public_id(gone: AuditEntry) -> str:
    """``public_id`` of the memory a forget row keeps whole: mem0's id for one from mem0, else engram's."""
    detail = gone.detail or {}
    metadata = detail.get("metadata")
    return (_mem0_id(detail.get("source"), metadata) if isinstance(metadata, Mapping) else None) or str(gone.memory_id)


def _every(view: Engram, filters: Filters | None = None) -> list[EngramMemory]:
    """Every memory of the agent's own scope matching ``filters``, read page by page first (the
    caller forgets as it goes, which would shift later pages)."""
    out: list[EngramMemory] = []
    while True:
        page = view.list(filters, limit=MAX_LIST_LIMIT, offset=len(out), scope="agent")
        out.extend(page)
        if len(page) < MAX_LIST_LIMIT:
            return out


def __getattr__(name: str) -> Any:
    # mem0 exports AsyncMemory beside Memory; it lives in its own module (imported on first use).
    if name == "AsyncMemory":
        from engram.compat.mem0_async import AsyncMemory

        return AsyncMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
