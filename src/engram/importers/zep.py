"""Zep: its users' threads and knowledge graphs, as the user's own code dumps them with Zep's SDK.

Zep has no export: its data is read through its API. A few lines of the user's code (the script in
docs/coming-from/zep.md; engram never calls Zep) write one JSON document of the objects Zep's API
returns, as the SDK dumps them::

    {"users": [{"user_id": "alice", "first_name": ..., "email": ..., "metadata": ...,
                "threads": [{"thread_id": "t1", "messages": [<Message>, ...]}],
                "edges": [<EntityEdge>, ...], "nodes": [<EntityNode>, ...]}]}

or one such user object alone. Field names are Zep's (zep-cloud 3.x): a Message has ``uuid``,
``role`` (its role type: user, assistant, system, tool, function, norole), ``name``, ``content``,
``created_at``, ``metadata`` (Zep v2's messages carry the role type in ``role_type`` and the
sender's name in ``role``: read too); an EntityEdge ``uuid``, ``name`` (the relation, ``WORKS_AT``),
``fact``, ``source_node_uuid``, ``target_node_uuid``, ``created_at``, ``valid_at``, ``invalid_at``,
``expired_at``, ``episodes``, ``attributes``; an EntityNode ``uuid``, ``name``, ``summary``,
``labels``, ``created_at``, ``attributes``. The SDK's ``model_dump()`` names the id ``uuid_``
(its Python field) where the API's JSON says ``uuid``: either is read. Zep's TypeScript SDK
(``@getzep/zep-cloud``) gives the same objects with camelCase names (``userId``, ``threadId``,
``createdAt``, ``sourceNodeUuid``, ``validAt``, ``roleType``, ...): a dump its objects were written
in (``JSON.stringify``) is read too, a field named as the file names it in errors and warnings.
Zep's v4 API names an edge's episodes ``episode_uuids`` (v3: ``episodes``): either is read. The
edge's ``source_node_name`` and ``target_node_name``, which the API gives beside the uuids, name its
ends when the file's nodes do not. Other fields (``score``, ``processed``, ``graph_uuid``, a thread's
``row_count``) are ignored.

Mapping: each user is an engram agent (its ``user_id``, by the naming rule of every importer).
Each fact edge is a ``knowledge`` memory whose content is the fact, byte for byte; its valid time
is Zep's: ``valid_from`` from ``valid_at``, ``valid_until`` from ``invalid_at``. An edge Zep marked
outdated (``expired_at``) is imported with its validity closed (``valid_until`` = ``invalid_at``,
else ``expired_at``), not superseded: Zep does not record which fact replaced it, and engram's
supersede needs the successor; recall ``as_of`` a time after its end (``--as-of``) leaves it out. The relation
name, lowercased, is its tag; the source node's name its ``related_entity`` (from the file's nodes,
else the edge's ``source_node_name``); Zep's ids and times in ``metadata["zep"]``. Each entity node
with a summary is a ``knowledge`` memory of that summary keyed by the entity's name, its labels
(``Entity`` aside) as tags, linked to the facts whose ends it is: the facts about Alice are Alice's
summary's neighbours. A node without a summary only names its facts' entity. Each thread's messages
join the user's conversation ``zep:<thread_id>`` in time order at their times: user, assistant and
system messages as they are, the sender's ``name`` and Zep's ``uuid`` in ``metadata["zep"]``; tool
and function messages (Zep keeps a tool's output as text, without the call it answers, which an
engram tool message needs) and ``norole`` messages (no speaker) are counted in the warnings, not
imported. The user's name, email and metadata are Zep's account record, not memory: reported.

Ids come from Zep's uuids, so importing the same file again adds nothing; an edge's uuid repeated
with another fact is refused. Zep changes its facts and summaries in place, under the same uuid (it
closes a fact it learns is outdated, appends episodes, rewrites a summary), so every record is
marked ``refresh``: a newer dump brings over to the memory an earlier import made Zep's changed
``metadata["zep"]`` with the valid time it gives (a fact Zep invalidated since gets its end), and
Zep's new text unless the memory's text was changed in engram (``apply._changes``). Still not
superseded: Zep does not say which fact replaced it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engram import jsondoc
from engram.history.keys import conversation_key, usable_part
from engram.importers.base import (
    HistoryEntry,
    Plan,
    Record,
    a_list,
    agent_name,
    an_object,
    fail,
    member,
    metadata,
    optional_text,
    slug,
    tags,
    timestamp,
    with_provenance,
    wrong_type,
    wrong_value,
)

KIND = "zep"
_SHAPE = ('{"users": [{"user_id", "threads": [{"thread_id", "messages": [...]}], "edges": [...], '
          '"nodes": [...]}]} as Zep\'s SDK dumps them, or one such user object')
_ROLE_TYPES = ("user", "assistant", "system", "tool", "function", "norole")
_IMPORTED_ROLES = ("user", "assistant", "system")
_PARTS = ("threads", "edges", "nodes")


def _camel(name: str) -> str:
    """The TypeScript SDK's name of one of Zep's fields: ``created_at`` is ``createdAt``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _spelled(item: Mapping[str, Any], name: str) -> str:
    """How ``item`` names Zep's field ``name`` (the API's snake_case): the TypeScript SDK's camelCase
    when only that is there, so an error or warning names the field as the file has it (a field the
    item lacks is named as the API names it)."""
    camel = _camel(name)
    return camel if name not in item and camel in item else name


def _get(item: Mapping[str, Any], name: str) -> Any:
    return item.get(_spelled(item, name))


def _at(item: Mapping[str, Any], where: str, name: str) -> str:
    """The JSON path of ``item``'s field ``name`` at ``where``, as the file spells it."""
    return member(where, _spelled(item, name))


def looks_like(data: Any) -> bool:
    """A dump of Zep users: ``{"users": [...]}`` whose users carry a ``user_id`` and threads,
    edges or nodes, or one such user."""
    if not isinstance(data, Mapping):
        return False
    users = data.get("users")
    if isinstance(users, list):
        return bool(users) and all(_is_user(u) for u in users[:5])
    return _is_user(data)


def _is_user(value: Any) -> bool:
    return (isinstance(value, Mapping) and _spelled(value, "user_id") in value
            and any(isinstance(value.get(p), list) for p in _PARTS))


def read(text: str) -> Plan:
    """The plan of a Zep dump; raises ``SnapshotError`` naming the JSON path of what is malformed
    (``users[0].edges[3].fact``), before anything is imported."""
    try:
        data = jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})", _SHAPE) from None
    if isinstance(data, Mapping) and "users" in data:
        users = a_list(data.get("users"), "users")
        places = [(f"users[{i}]", user) for i, user in enumerate(users)]
    elif isinstance(data, Mapping) and _spelled(data, "user_id") in data:
        places = [("", data)]
    else:
        raise fail("document", "no Zep user", _SHAPE)
    plan = Plan(KIND, "zep")
    for where, user in places:
        _User(plan, where, user).read()
    return plan


def _uuid(item: Mapping[str, Any], where: str) -> str:
    """Zep's id of an object (``_optional_uuid``), which it must have."""
    found = _optional_uuid(item, where)
    if found is None:
        raise fail(member(where, "uuid"), "is missing", "Zep's uuid of the object")
    return found


def _optional_uuid(item: Mapping[str, Any], where: str) -> str | None:
    """Zep's id of an object, if given: ``uuid`` in the API's JSON, ``uuid_`` in the SDK's
    ``model_dump()``; a bad one is named as the file spells it."""
    name = "uuid" if "uuid" in item or "uuid_" not in item else "uuid_"
    return optional_text(item.get(name), member(where, name))


def _text(item: Mapping[str, Any], name: str, where: str, what: str) -> str:
    """A text field kept byte for byte (not stripped): present and not blank."""
    value = _get(item, name)
    if not isinstance(value, str) or not value.strip():
        raise wrong_value(_at(item, where, name), value, what)
    return value


def _time(item: Mapping[str, Any], name: str, where: str) -> float | None:
    return timestamp(_get(item, name), _at(item, where, name))


def _episodes(edge: Mapping[str, Any], where: str) -> list[Any]:
    """The uuids of the episodes a fact came from: ``episodes`` (Zep v3), ``episode_uuids`` (v4)."""
    name = next((n for n in ("episodes", "episode_uuids") if _get(edge, n) is not None), "episodes")
    return a_list(_get(edge, name), _at(edge, where, name))


def _conversation(thread_id: str) -> str:
    """``zep:<thread_id>``; a thread id that cannot be a key's part (a ``:``, spaces, over 128
    characters) keeps its usable characters and 8 hex digits of its SHA-256, one key per id."""
    return conversation_key(KIND, usable_part(thread_id))


@dataclass
class _Node:
    name: str
    record: str | None  # the source id of its summary's record, when it has one


@dataclass
class _User:
    """One Zep user's threads and graph read into ``plan``."""

    plan: Plan
    where: str
    user: Any
    nodes: dict[str, _Node] = field(default_factory=dict)
    user_id: str = ""
    agent: str | None = None
    shown: str = ""  # how warnings name the user: ``users[0] (alice)``

    def read(self) -> None:
        user = an_object(self.user, self.where or "document", "a Zep user object")
        user_id = optional_text(_get(user, "user_id"), _at(user, self.where, "user_id"))
        if user_id is None:
            raise fail(_at(user, self.where, "user_id"), "is missing", "the Zep user's user_id")
        self.user_id = user_id
        self.agent = agent_name(self.user_id, _at(user, self.where, "user_id"))
        self.shown = f"{self.where or 'document'} ({self.user_id})"
        for i, node in enumerate(a_list(user.get("nodes"), member(self.where, "nodes"))):
            self._node(node, f"{member(self.where, 'nodes')}[{i}]")
        # Facts Zep marked outdated, counted by how their edges spell its fields (one spelling a
        # dump, as its SDK wrote it), so the warning names them as the file does.
        expired: dict[tuple[str, str], int] = {}
        for i, edge in enumerate(a_list(user.get("edges"), member(self.where, "edges"))):
            spelt = self._edge(edge, f"{member(self.where, 'edges')}[{i}]")
            if spelt is not None:
                expired[spelt] = expired.get(spelt, 0) + 1
        for (expired_at, invalid_at), count in expired.items():
            self.plan.warnings.append(
                f"{self.shown}: facts Zep marked outdated ({expired_at}) ({count}) imported with their validity closed "
                f"(valid_until = {invalid_at}, else {expired_at}), not superseded: Zep does not say which fact replaced "
                "them (engram supersede OLD NEW does)")
        without = sum(1 for node in self.nodes.values() if node.record is None)
        if without:
            self.plan.warnings.append(f"{self.shown}: entity nodes without a summary ({without}) not imported as "
                                      "memories; their names are the related entity of their facts")
        for i, thread in enumerate(a_list(user.get("threads"), member(self.where, "threads"))):
            self._thread(thread, f"{member(self.where, 'threads')}[{i}]")
        profile = [_spelled(user, name) for name in ("first_name", "last_name", "email", "metadata") if _get(user, name)]
        if profile:
            self.plan.warnings.append(f"{self.shown}: {', '.join(profile)} not imported (Zep's record of the user, "
                                      "not memory; the user's node summary holds what Zep learned of them)")

    def _node(self, value: Any, where: str) -> None:
        node = an_object(value, where, "a Zep EntityNode object")
        uuid = _uuid(node, where)
        name = _text(node, "name", where, "the entity's name")
        if uuid in self.nodes:
            raise fail(f"{where}.uuid", f"{jsondoc.shown(uuid)} repeats an earlier node", "a uuid of its own")
        summary = node.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise wrong_type(f"{where}.summary", summary, "the entity's summary text")
        labels = a_list(node.get("labels"), f"{where}.labels")
        if not all(isinstance(label, str) for label in labels):
            raise wrong_value(f"{where}.labels", labels, "a list of label names")
        if not summary or not summary.strip():
            self.nodes[uuid] = _Node(name, None)
            return
        attributes = metadata(node.get("attributes"), f"{where}.attributes")
        provenance = {k: v for k, v in (("node", uuid), ("user_id", self.user_id), ("name", name),
                                        ("labels", labels or None), ("attributes", attributes or None)) if v}
        source_id = uuid  # Zep's uuids are unique across nodes and edges
        created = _time(node, "created_at", where)
        self.plan.records.append(Record(
            source_id=source_id, where=where, content=summary, key=slug(name),
            tags=tags([label for label in labels if label.lower() != "entity"], f"{where}.labels"),
            metadata={KIND: provenance}, related_entity=name, created_at=created, agent=self.agent,
            id_field="uuid", fields={"content": ".summary", "key": ".name", "related_entity": ".name",
                                     "created_at": f".{_spelled(node, 'created_at')}"},
            what=f"the summary of {name!r}", refresh=True))
        self.nodes[uuid] = _Node(name, source_id)

    def _edge(self, value: Any, where: str) -> tuple[str, str] | None:
        """Read one fact edge; when Zep marked it outdated, returns how the edge names its
        ``expired_at`` and ``invalid_at`` (``expiredAt``, ``invalidAt`` in a TypeScript dump)."""
        edge = an_object(value, where, "a Zep EntityEdge object")
        uuid = _uuid(edge, where)
        fact = _text(edge, "fact", where, "the fact's text")
        relation = _text(edge, "name", where, "the relation's name (WORKS_AT)")
        ends = {side: optional_text(_get(edge, f"{side}_node_uuid"), _at(edge, where, f"{side}_node_uuid"))
                for side in ("source", "target")}
        names = {side: self.nodes[ends[side]].name if ends[side] in self.nodes else
                 optional_text(_get(edge, f"{side}_node_name"), _at(edge, where, f"{side}_node_name")) for side in ends}
        valid_from = _time(edge, "valid_at", where)
        invalid = _time(edge, "invalid_at", where)
        expired = _time(edge, "expired_at", where)
        valid_until, end = (invalid, "invalid_at") if invalid is not None else (expired, "expired_at")
        start, end = _spelled(edge, "valid_at"), _spelled(edge, end)
        if valid_from is not None and valid_until is not None and valid_until < valid_from:
            raise fail(f"{where}.{end}",
                       f"{jsondoc.shown(edge.get(end))} is before {start} {jsondoc.shown(edge.get(start))}",
                       f"a time at or after {start}")
        episodes = _episodes(edge, where)
        attributes = metadata(edge.get("attributes"), f"{where}.attributes")
        provenance = {k: v for k, v in (
            ("edge", uuid), ("user_id", self.user_id), ("name", relation),
            ("source_node_uuid", ends["source"]), ("target_node_uuid", ends["target"]),
            ("source", names["source"]), ("target", names["target"]),
            ("valid_at", _get(edge, "valid_at")), ("invalid_at", _get(edge, "invalid_at")),
            ("expired_at", _get(edge, "expired_at")), ("episodes", episodes or None),
            ("attributes", attributes or None)) if v}
        source_id = uuid
        self.plan.records.append(Record(
            source_id=source_id, where=where, content=fact, tags=tags([relation.lower()], f"{where}.name"),
            metadata={KIND: provenance}, related_entity=names["source"],
            created_at=_time(edge, "created_at", where), agent=self.agent,
            id_field="uuid", fields={"content": ".fact", "valid_from": f".{start}", "valid_until": f".{end}",
                                     "created_at": f".{_spelled(edge, 'created_at')}"},
            valid_from=valid_from, valid_until=valid_until, refresh=True))
        for side in ("source", "target"):
            node = self.nodes.get(ends[side] or "")
            if node is not None and node.record is not None:
                self.plan.links.append((source_id, node.record))
        if expired is None:
            return None
        return _spelled(edge, "expired_at"), _spelled(edge, "invalid_at")

    def _thread(self, value: Any, where: str) -> None:
        thread = an_object(value, where, "a thread object with thread_id and messages")
        thread_id = optional_text(_get(thread, "thread_id"), _at(thread, where, "thread_id"))
        if thread_id is None:
            raise fail(_at(thread, where, "thread_id"), "is missing", "the Zep thread's thread_id")
        key = _conversation(thread_id)
        left_out: dict[str, int] = {}
        said: list[HistoryEntry] = []
        for n, item in enumerate(a_list(thread.get("messages"), f"{where}.messages")):
            place = f"{where}.messages[{n}]"
            message = an_object(item, place, "a Zep Message object")
            role, name = _role(message, place)
            content = message.get("content")
            if not isinstance(content, str):
                raise wrong_type(f"{place}.content", content, "the message's text")
            at = _time(message, "created_at", place)
            if at is None:
                raise fail(_at(message, place, "created_at"), "is missing", "an ISO 8601 time")
            own = metadata(message.get("metadata"), f"{place}.metadata")
            if role not in _IMPORTED_ROLES or not content.strip():
                what = f"{role} messages" if role not in _IMPORTED_ROLES else "empty messages"
                left_out[what] = left_out.get(what, 0) + 1
                continue
            uuid = _optional_uuid(message, place)
            provenance = {k: v for k, v in (("uuid", uuid), ("name", name)) if v}
            meta = with_provenance(own, KIND, provenance, place, self.plan.warnings) if provenance else own
            said.append(HistoryEntry(place, key, role, content, at, meta, agent=self.agent,
                                     fields={"created_at": _at(message, place, "created_at").removeprefix(place)}))
        # A thread is its messages in time order; how the dump listed them (newest first, pages
        # joined) does not change it. Messages of the same instant keep the dump's order.
        self.plan.history += sorted(said, key=lambda entry: entry.created_at)
        if left_out:
            why = [w for w, shown in (
                ("Zep keeps a tool's output as text without the call it answers, which an engram tool message needs",
                 "tool messages" in left_out or "function messages" in left_out),
                ("a norole message has no speaker", "norole messages" in left_out)) if shown]
            self.plan.warnings.append(f"{where} ({thread_id}): not imported: "
                                      + ", ".join(f"{what} ({n})" for what, n in left_out.items())
                                      + (f" ({'; '.join(why)})" if why else ""))


def _role(message: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    """(role type, sender's name): Zep v3 gives the type in ``role`` and the name in ``name``; v2
    gave the type in ``role_type`` and a free name in ``role``."""
    if _get(message, "role_type") is not None:
        field, name = _spelled(message, "role_type"), optional_text(message.get("role"), f"{where}.role")
    else:
        field, name = "role", optional_text(message.get("name"), f"{where}.name")
    role = message.get(field)
    if not isinstance(role, str) or role.strip().lower() not in _ROLE_TYPES:
        v2 = field if field != "role" else "role_type"  # as the message spells it, when it has one
        raise fail(f"{where}.{field}", f"{jsondoc.shown(role)} is not a Zep role type",
                   f"{', '.join(_ROLE_TYPES)} (in role, or in {v2} as Zep v2 wrote it beside a sender's name)")
    return role.strip().lower(), name
