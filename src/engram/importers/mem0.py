"""mem0: the JSON that ``Memory.get_all()`` / the platform export returns.

Accepted shapes: ``{"results": [...]}`` (mem0 ≥ 0.1, optionally with ``relations``), a bare list
(v1 output), and the platform's ``{"memories": [...]}``. Each item: ``id``, ``memory`` (the text),
``hash``, ``metadata``, ``categories``, ``created_at`` / ``updated_at`` (ISO 8601),
``user_id`` / ``agent_id`` / ``run_id``. Mapping: the text is the content; the item's metadata is
kept; the mem0 id, hash, user and run, and the platform's fields engram has no field for (``owner``,
``organization``, ``structured_attributes``, ...: ``KEPT``), are kept under ``metadata["mem0"]`` (an item's own
``metadata["mem0"]`` is kept there as ``metadata["mem0"]["own"]``, with a warning, and the mem0
exporter and facade give it back where it was); the item's owner names the engram agent
(``owner``: its ``user_id`` as it is, else ``agent:`` and its ``agent_id``, else ``run:`` and its
``run_id``), and its ids, ``actor_id`` and ``role`` sit at the top of the metadata (``PROMOTED``),
as mem0 keeps them beside an item's metadata: the layout of the mem0 facade
(``engram.compat.mem0``), which finds, lists, updates and deletes what this import brought as its
own; categories become tags; times are kept. mem0's graph
``relations`` (``source``/``relationship``/``destination`` entity names) link the memories that
mention both ends by name (a relation with an end no memory mentions is named in a warning). mem0
updates a memory in place (same id, new text, later ``updated_at``),
so every record is marked ``refresh``, dated by its ``updated_at`` (else ``created_at``): an item
newer than the memory an earlier import made of it (its update time in engram) brings its text
(unless the text was changed in engram since), categories as tags (in place of those the last
import brought, kept in ``metadata["mem0"]``: a tag added in engram stays), metadata and expiry to that
memory (``apply._changes``); an item as old or older changes nothing. engram's own mem0 export
carries engram's fields in the item's ``engram`` entry, beside mem0's fields: its key, category,
type, importance and links are restored, and a memory whose engram id the importing agent holds is
that memory (skipped, not copied, never refreshed: the item is engram's record of it, not mem0's).

The rule for ``engram`` in an item's ``metadata``: the metadata is the user's, all of it, so
``metadata["engram"]`` is the item's own value (whatever it holds, even a copy of engram's fields),
kept as it is and given back by the exporter and the facade; engram's fields are read from the
item's own ``engram`` entry alone (mem0 puts nothing there). Exports written before that rule (by
unreleased builds) carried engram's fields in ``metadata["engram"]``: they come back as metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.importers.base import (
    Plan,
    Record,
    agent_name,
    an_object,
    content_text,
    engram_fields,
    fail,
    keep_engram_source,
    metadata,
    optional_text,
    require_text,
    split_provenance,
    tags,
    timestamp,
    with_provenance,
    wrong_type,
)
from engram.integrations import DEFAULT_AGENT_PREFIX
from engram.model import Category, Memory

KIND = "mem0"
# mem0's ids, as its items and its ``Memory`` methods name them.
IDS = ("user_id", "agent_id", "run_id")
# The engram agent a mem0 memory lives in, for ``engram import`` and the mem0 facade alike
# (``owner``): a user's id as it is (``alice`` is the agent ``alice`` everywhere in engram), an
# agent's or a run's under a prefix, so a user, an agent and a run of the same name never share
# memories (a user id holding ':' is refused: ``check_user_id``).
OWNER_PREFIX = {"user_id": "", "agent_id": "agent:", "run_id": "run:"}
# mem0's fields kept at the top of the memory's metadata, where the facade filters on them (mem0
# keeps them beside an item's metadata and gives them at the top of its item, never in its metadata).
PROMOTED = (*IDS, "actor_id", "role")
# The item's entry where engram's own mem0 export carries engram's fields of a memory (key,
# category, ...): beside mem0's fields, never in the metadata, which is the user's (see above).
ENGRAM_ENTRY = "engram"
# mem0's fields as its TypeScript SDK (``mem0ai/oss``) names them in what ``getAll()`` returns.
_CAMEL = {"user_id": "userId", "agent_id": "agentId", "run_id": "runId", "created_at": "createdAt",
          "updated_at": "updatedAt", "attributed_to": "attributedTo"}
# mem0's fields kept as they are in ``metadata["mem0"]``: what names the item in mem0 (id, hash, its
# user, agent, run and app), and the platform's fields engram has no field for (``owner`` and
# ``organization`` name the mem0 account that holds it and never choose the engram agent: that is
# ``agent_id`` or ``user_id``, or the importing agent; ``structured_attributes`` is the platform's
# breakdown of ``created_at``: day, hour, weekday, ...), so the mem0 exporter gives them back.
KEPT = ("id", "hash", "user_id", "agent_id", "run_id", "app_id", "actor_id", "role", "attributed_to", "memory_type",
        "owner", "organization", "expiration_date", "immutable", "structured_attributes")


def owner(ids: Mapping[str, Any]) -> tuple[str, str] | None:
    """(the id's name, the engram agent) owning a mem0 memory with these ids, or None without any:
    its ``user_id``, else its ``agent_id``, else its ``run_id`` (mem0 reads a user's memories
    whatever agent or run they also name), under ``OWNER_PREFIX``; an id no agent can be named
    as it is (``José``, mem0 takes any text) by the importer's name for it (``agent_name``). The one
    mapping of mem0's ids onto engram's agents: ``engram import`` places an item by it and the mem0
    facade stores and reads by it, so each finds what the other made."""
    name = next((k for k in IDS if isinstance(ids.get(k), str) and ids[k]), None)
    agent = None if name is None else agent_name(OWNER_PREFIX[name] + ids[name], name, name.split("_")[0])
    return None if name is None or agent is None else (name, agent)


def check_user_id(value: str, field: str = "user_id") -> None:
    """Refuses a mem0 user id holding ':' (``ValidationError`` naming ``field``). A user's memories
    live in the engram agent named by the id as it is; every agent another door names for its own
    users or owners is a prefix ending in ':' and an id (the facade's agent: and run:, LangGraph's
    lg:, Google ADK's adk:, Agno's agno:, the strands: and crewai: the docs suggest): such a user id
    could name one of them, and add to or change its memories."""
    if ":" in value:
        raise ValidationError(field, f"{jsondoc.shown(value)} holds ':', kept for the engram agents doors name with a prefix "
                              f"(agent_id's agent:, run_id's run:, LangGraph's {DEFAULT_AGENT_PREFIX}, Google ADK's "
                              "adk:, Agno's agno:, an application's)", "a user id without ':'")


def check_item_id(name: str, value: str | None, field: str) -> None:
    """Refuses a mem0 item's ``user_id``, ``agent_id`` or ``run_id`` (``name``) that the mem0 facade
    would refuse as an owner (``ValidationError`` naming ``field``): whitespace alone (``" "``: the
    facade refuses a blank id, so what an import placed by it, or in the importing agent as if it
    named none, the facade could never reach by it), or a user id holding ':' (``check_user_id``).
    An id the facade refuses only for its spelling (``José``, ``user 1``) is the importer's to name
    (``agent_name``); an empty one is none, as every importer reads an empty field."""
    if value is None or value == "":
        return
    if not value.strip():
        raise ValidationError(field, f"{jsondoc.shown(value)} is blank", f"{name}: an id with a character other "
                              "than whitespace, or none")
    if name == "user_id":
        check_user_id(value, field)


def mem0_metadata(memory: Memory) -> tuple[dict[str, Any], dict[str, Any]]:
    """A memory's metadata as mem0 had it (or as the mem0 facade was given it), and what engram
    keeps of its mem0 origin (id, hash, user, ...; empty for none). Only a memory whose source is
    ``mem0`` (imported from mem0, or made through the facade) holds engram's entry at
    ``metadata["mem0"]``, the user's own value inside it as ``["own"]``; any other memory's
    ``metadata["mem0"]`` is its own, given as it is."""
    if memory.source != KIND:
        return dict(memory.metadata), {}
    return split_provenance(memory.metadata, KIND)


def looks_like(data: Any) -> bool:
    """mem0's output: a list of its memories, or ``{"results": [...]}``, which is mem0's even when
    empty (what ``get_all`` gives a user without memories; engram's snapshot has no ``results``)."""
    if isinstance(data, Mapping) and data.get("results") == []:
        return True
    items = data.get("results") if isinstance(data, Mapping) else data
    if isinstance(data, Mapping) and items is None:
        items = data.get("memories")
    return isinstance(items, list) and bool(items) and all(isinstance(i, Mapping) and "memory" in i for i in items[:5])


def read(text: str) -> Plan:
    try:
        data = jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})", "mem0 get_all JSON") from None
    if isinstance(data, list):
        items, where = data, ""
    elif isinstance(data, Mapping) and isinstance(data.get("results"), list):
        items, where = data["results"], "results"
    elif isinstance(data, Mapping) and isinstance(data.get("memories"), list):
        items, where = data["memories"], "memories"
    else:
        raise fail("document", "no list of memories", '{"results": [...]} or a JSON array of mem0 memories')
    plan = Plan(KIND, "mem0")
    engram_links: list[tuple[str, list[str]]] = []
    for i, item in enumerate(items):
        record, links = _record(item, f"{where}[{i}]", plan.warnings)
        plan.records.append(record)
        engram_links.append((record.source_id, links))
    # engram's own export names links by engram id: they link the records exported with those ids.
    by_engram_id = {r.engram_id: r.source_id for r in plan.records if r.engram_id}
    plan.links += [(a, by_engram_id[b]) for a, links in engram_links for b in links if b in by_engram_id]
    relations = data.get("relations") if isinstance(data, Mapping) else None
    if isinstance(relations, list):
        _link_relations(plan, relations)
    return plan


def _record(item: Any, where: str, warnings: list[str]) -> tuple[Record, list[str]]:
    """The item's record and the engram ids it links to (from engram's own export)."""
    if not isinstance(item, Mapping):
        raise wrong_type(where, item, "a JSON object per memory")
    source_id = optional_text(item.get("id"), f"{where}.id")
    if source_id is None:
        raise fail(f"{where}.id", "is missing", "mem0's memory id")
    # mem0's TypeScript SDK spells these in camelCase (``userId``, ``createdAt``): read either way.
    names = {field: _spelling(item, field) for field in _CAMEL}
    ids = {name: optional_text(item.get(names[name]), f"{where}.{names[name]}") for name in IDS}
    own = metadata(item.get("metadata"), f"{where}.metadata")  # the user's, an "engram" entry included
    carried = engram_fields(item.get(ENGRAM_ENTRY), f"{where}.{ENGRAM_ENTRY}")
    kept = {k: item[names.get(k, k)] for k in KEPT if item.get(names.get(k, k)) not in (None, "")}
    _check_kept(kept, names, where)
    # The memory's source in the engram it was exported from, kept in metadata["mem0"] (its own is mem0)
    # and given back by the mem0 exporter in the item's engram entry.
    keep_engram_source(kept, carried, KIND)
    agent, promoted = _placed(ids, own, kept, names, where)
    created = timestamp(item.get(names["created_at"]), f"{where}.{names['created_at']}")
    updated = timestamp(item.get(names["updated_at"]), f"{where}.{names['updated_at']}")
    return Record(
        source_id=source_id,
        where=where,
        content=content_text(item.get("memory"), f"{where}.memory"),
        key=carried.get("key"),
        category=carried.get("category", Category.KNOWLEDGE),
        type=carried.get("type") or "learned",
        importance=carried.get("importance", 0.5),
        related_entity=carried.get("related_entity"), search_context=carried.get("search_context"),
        engram_id=carried.get("id"),
        tags=tags(item.get("categories"), f"{where}.categories"),
        metadata=with_provenance({**own, **promoted}, KIND, kept, where, warnings), placed=promoted,
        created_at=created,
        updated_at=updated,
        valid_until=_expiry(item.get("expiration_date"), f"{where}.expiration_date"),
        agent=agent,
        id_field="id",
        fields={"content": ".memory", "key": f".{ENGRAM_ENTRY}.key" if carried.get("key") else ".memory",
                "related_entity": f".{ENGRAM_ENTRY}.related_entity", "search_context": f".{ENGRAM_ENTRY}.search_context",
                "tags": ".categories", "created_at": f".{names['created_at']}", "updated_at": f".{names['updated_at']}"},
        # mem0 updates a memory in place (same id, new text, later updated_at): a newer export brings
        # that to the memory an earlier import made (apply._changes), an older or the same one nothing.
        # An item engram's own export wrote (its ``engram`` entry names the memory) is engram's record
        # of that memory, not a change mem0 made: the memory it names is kept as it stands.
        refresh=carried.get("id") is None, changed_at=updated if updated is not None else created,
    ), carried.get("links", [])


def _placed(ids: Mapping[str, str | None], own: Mapping[str, Any], kept: Mapping[str, Any], names: Mapping[str, str],
            where: str) -> tuple[str | None, dict[str, str]]:
    """The engram agent an item with these ``ids`` joins (``owner``; None without ids: the importing
    agent's), and the fields kept at the top of its metadata (``PROMOTED``), as the mem0 facade
    stores them (an owner that is no valid agent name as it is, ``José``, by the importer's name
    for it, as ``owner`` names it for the facade too); an item's own
    metadata naming another id than the item's is refused, as the facade refuses ids in metadata
    (mem0 keeps its ids beside the metadata, so its items hold none there)."""
    for name, value in ids.items():  # as the facade refuses an owner: blank, or a user id holding ':'
        try:
            check_item_id(name, value, name)
        except ValidationError as exc:
            raise fail(f"{where}.{names[name]}", exc.problem, exc.allowed) from None
    # Trimmed, as the facade takes an id.
    ids = {name: value.strip() if value is not None else None for name, value in ids.items()}
    for name in IDS:
        # The same id repeated in the metadata loses nothing (it is at the top already); another would.
        if name in own and (ids[name] is None or str(own[name]) != ids[name]):
            raise fail(f"{where}.metadata.{name}", f"{jsondoc.shown(own[name])} differs from the item's "
                       f"{names[name]} ({jsondoc.shown(ids[name])}): mem0 keeps its ids beside the metadata",
                       f"no {name} in the metadata, or the item's own")
    placed = owner({name: value for name, value in ids.items() if value is not None})
    agent = None if placed is None else placed[1]
    promoted = {name: value for name, value in ids.items() if value is not None}
    promoted |= {k: kept[k] for k in ("actor_id", "role") if k in kept}
    return agent, promoted


def _check_kept(kept: Mapping[str, Any], names: Mapping[str, str], where: str) -> None:
    """The platform fields kept whole checked for their sort, so a malformed one is named here
    rather than kept as something mem0 never writes."""
    for field in ("owner", "organization", "memory_type", "attributed_to"):
        if field in kept:
            optional_text(kept[field], f"{where}.{names.get(field, field)}")
    if "structured_attributes" in kept:
        an_object(kept["structured_attributes"], f"{where}.structured_attributes", "a JSON object (mem0's day, hour, ...)")


def _spelling(item: Mapping[str, Any], field: str) -> str:
    """The name ``item`` gives ``field``: mem0's Python spelling, else its TypeScript one."""
    camel = _CAMEL.get(field)
    return camel if camel and item.get(field) is None and item.get(camel) is not None else field


def _expiry(value: Any, where: str) -> float | None:
    """The end of a memory's valid time from mem0's ``expiration_date`` (``YYYY-MM-DD``, UTC): mem0
    shows the memory all through that day and hides it from the next, so it holds until then."""
    expires = timestamp(value, where)
    if expires is None:
        return None
    if isinstance(value, str) and len(value.strip()) == len("YYYY-MM-DD"):
        return expires + 86400  # a date alone: the whole of that day
    return expires


def _link_relations(plan: Plan, relations: list[Any]) -> None:
    for i, rel in enumerate(relations):
        where = f"relations[{i}]"
        if not isinstance(rel, Mapping):
            raise wrong_type(where, rel, "an object with source, relationship, target (or destination)")
        # get_all() names the far end ``target``, search() ``destination``.
        far = "destination" if rel.get("target") is None and rel.get("destination") is not None else "target"
        ends = [require_text(rel.get(side), f"{where}.{side}").lower().replace("_", " ")
                for side in ("source", far)]
        mentions = [[r.source_id for r in plan.records if end in r.content.lower()] for end in ends]
        pairs = [(a, b) for a in mentions[0] for b in mentions[1] if a != b]
        plan.links.extend(pairs)
        unnamed = [jsondoc.shown(end) for end, found in zip(ends, mentions, strict=True) if not found]
        if unnamed:  # said, as a dangling relation of the MCP memory server is, rather than dropped unseen
            plan.warnings.append(f"{where} ({rel.get('source')} {rel.get('relationship')} {rel.get(far)}): no memory "
                                 f"names {' or '.join(unnamed)}; relation not imported")
