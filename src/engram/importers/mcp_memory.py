"""The MCP reference memory server (``@modelcontextprotocol/server-memory``): its ``memory.jsonl``.

One JSON object per line: ``{"type": "entity", "name", "entityType", "observations": [...]}`` or
``{"type": "relation", "from", "to", "relationType"}``. An entity becomes one memory: its
observations are the content (one per line, under the entity's name), the name is the key and
the related entity, the entity type a tag and ``metadata["entity_type"]``. A relation links the
two entities' memories both ways; its direction and type are kept in the ``from`` memory's
``metadata["relations"]`` (engram links carry no type). A relation naming an entity the file does
not hold (older servers wrote such relations) is named in a warning and not imported.

Forks of the server (``mcp-knowledge-graph`` and others) add ``createdAt`` and ``updatedAt`` (ISO 8601)
and a ``version`` count to both kinds of line. An entity's ``createdAt`` is its memory's creation
time (the earliest, when the entity spans lines), ``updatedAt`` (beside one) its update time, ``version`` kept as
``metadata["mcp_memory"]["version"]`` (the highest); a relation's three are kept in its entry of
``metadata["relations"]`` as ``created_at``, ``updated_at`` and ``version``, as the file has them. A
date that is not one is an error naming its line and field (``line 3.createdAt``), as every importer
names one, and nothing is imported.

The temporal fork (``study-flamingo/mcp-knowledge-graph``) writes each observation it adds as an object,
``{"content", "timestamp", "durability"}``: the text, when it was added (ISO 8601; its Python server writes
local time without a zone, read as UTC as every zoneless time is) and how long it stays true (``permanent``,
``long-term``, ``short-term``, ``temporary``); an entity it has just created keeps text observations, so a
list may hold both. An object's text is a line of the content as a text observation is; its time joins the
entity's dates (the memory is created at its earliest, updated at its latest); the object itself, as the
file has it (any other member included), is kept in ``metadata["mcp_memory"]["observations"]``, in the
file's order, so its durability stays beside the text it qualifies. An object without text, or with a time
or durability that is none, is an error naming it (``line 2.observations[1].durability``).

The memory's id stays the one imports before any of these dates were read gave it (fixed by the entity's
name alone), so a re-import of the same file, or of the file before the fork rewrote it, finds what they stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram import jsondoc
from engram.importers.base import (
    Plan,
    Record,
    fail,
    json_lines,
    require_text,
    slug,
    tags,
    timestamp,
    wrong_type,
    wrong_value,
)

KIND = "mcp-memory"
# The durabilities ``mcp-knowledge-graph`` gives an observation (its server reads no other).
DURABILITIES = ("permanent", "long-term", "short-term", "temporary")
OBSERVATION = 'text, or an object {"content": text, "timestamp": ISO 8601, "durability": ' + \
    " | ".join(DURABILITIES) + "}"
OBSERVATIONS = f"a JSON array whose entries are each {OBSERVATION}"


def looks_like(first_line: Any) -> bool:
    return isinstance(first_line, Mapping) and first_line.get("type") in ("entity", "relation") and (
        "entityType" in first_line or "relationType" in first_line)


def read(text: str) -> Plan:
    entities: dict[str, dict[str, Any]] = {}
    relations: list[tuple[str, str, str, str, dict[str, Any]]] = []
    for _, where, item in json_lines(text):
        if item.get("type") == "entity":
            name = require_text(item.get("name"), f"{where}.name")
            entity = entities.setdefault(name, {"where": where, "type": None, "observations": [], "created": [],
                                                "updated": [], "versions": [], "objects": []})
            entity["type"] = entity["type"] or item.get("entityType")
            for said, given, seconds in _observations(item.get("observations"), f"{where}.observations"):
                entity["observations"].append(said)
                if given is not None:
                    entity["objects"].append(given)
                if seconds is not None:
                    # When the fork added the observation: the entity existed by then, and changed then.
                    entity["created"].append(seconds)
                    entity["updated"].append(seconds)
            stamps = _stamps(item, where)
            for field, into in (("created_at", "created"), ("updated_at", "updated"), ("version", "versions")):
                if field in stamps:
                    entity[into].append(stamps[field][1])
        elif item.get("type") == "relation":
            ends = [require_text(item.get(side), f"{where}.{side}") for side in ("from", "to")]
            relations.append((where, ends[0], ends[1], require_text(item.get("relationType"), f"{where}.relationType"),
                              {field: given for field, (given, _) in _stamps(item, where).items()}))
        else:
            raise fail(f"{where}.type", f"unknown type {jsondoc.shown(item.get('type'))}", "entity, relation")
    plan = Plan(KIND, "mcp-memory")
    outgoing: dict[str, list[dict[str, Any]]] = {}
    for where, a, b, kind, stamps in relations:
        absent = [end for end in (a, b) if end not in entities]
        if absent:
            # The server's create_relations of older versions (0.6) did not check that its ends exist,
            # and the server reads such a file as it is: the line is the server's own, not damage.
            plan.warnings.append(f"{where}: relation names {jsondoc.shown(absent[0])}, which no entity line defines; "
                                 "relation not imported")
            continue
        outgoing.setdefault(a, []).append({"type": kind, "to": b, **stamps})
        if a != b:
            plan.links.append((a, b))
    for name, entity in entities.items():
        body = "\n".join(f"- {o}" for o in entity["observations"])
        entity_type = entity["type"] if isinstance(entity["type"], str) else None
        heading = f"{name} ({entity_type})" if entity_type else name
        meta: dict[str, Any] = {"mcp_memory": {"name": name}}
        if entity["versions"]:
            meta["mcp_memory"]["version"] = max(entity["versions"])
        if entity["objects"]:
            meta["mcp_memory"]["observations"] = entity["objects"]
        created = min(entity["created"], default=None)
        if entity_type:
            meta["entity_type"] = entity_type
        if name in outgoing:
            meta["relations"] = outgoing[name]
        plan.records.append(Record(
            source_id=name, where=entity["where"], content=f"{heading}\n{body}" if body else heading,
            key=slug(name),
            tags=tags([slug(entity_type)] if entity_type else [], f"{entity['where']}.entityType"),
            metadata=meta, related_entity=name,
            # An update time only beside a creation time, never before it (a fork writes both).
            created_at=created, updated_at=max([*entity["updated"], created]) if created is not None else None,
            time_in_id=False,  # the id imports that did not read createdAt gave: a re-import still finds it
            fields={"content": ".observations", "key": ".name", "related_entity": ".name"},  # named at the entity's first line
        ))
    return plan


def _observations(value: Any, where: str) -> list[tuple[str, dict[str, Any] | None, float | None]]:
    """An entity's observations as ``(text, the object as the file has it or None, its time)``, in
    the file's order; a blank one says nothing and is left out. An entry is text (the reference
    server's) or, in ``mcp-knowledge-graph``'s temporal versions, an object: ``content`` (its text),
    ``timestamp`` (ISO 8601, when it was added) and ``durability`` (one of ``DURABILITIES``); any
    other member it has is kept with it. What is neither raises ``SnapshotError`` naming the entry
    (``line 3.observations[1].content``)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(where, value, OBSERVATIONS)
    out: list[tuple[str, dict[str, Any] | None, float | None]] = []
    for i, entry in enumerate(value):
        at = f"{where}[{i}]"
        if isinstance(entry, str):
            if entry.strip():
                out.append((entry, None, None))
            continue
        if not isinstance(entry, Mapping):
            raise wrong_type(at, entry, OBSERVATION)
        text = entry.get("content")
        if not isinstance(text, str):
            raise fail(f"{at}.content", "is missing", "the observation's text") if text is None \
                else wrong_type(f"{at}.content", text, "the observation's text")
        seconds = timestamp(entry.get("timestamp"), f"{at}.timestamp")
        durability = entry.get("durability")
        if durability is not None and durability not in DURABILITIES:
            raise wrong_value(f"{at}.durability", durability, ", ".join(DURABILITIES))
        if text.strip():
            out.append((text, dict(entry), seconds))
    return out


def _stamps(item: Mapping[str, Any], where: str) -> dict[str, tuple[Any, Any]]:
    """What a fork's line says of its times and version: ``{engram's name: (as the file has it, as
    engram reads it)}`` for each given. A time that is not one, or a version that is no count, raises
    ``SnapshotError`` naming the line and the file's field."""
    out: dict[str, tuple[Any, Any]] = {}
    for field, name in (("createdAt", "created_at"), ("updatedAt", "updated_at")):
        seconds = timestamp(item.get(field), f"{where}.{field}")
        if seconds is not None:
            out[name] = (item[field], seconds)
    version = item.get("version")
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise wrong_value(f"{where}.version", version, "a whole number of 0 or more (the fork's update count)")
        out["version"] = (version, version)
    return out
