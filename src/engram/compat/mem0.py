"""A mem0-shaped facade: ``from engram.compat.mem0 import Memory`` instead of ``from mem0 import Memory``.

Same method names, arguments and result shapes as mem0's open-source ``Memory`` (add, search,
get_all, get, update, delete, delete_all, history, reset), over an ``Engram``. How mem0's ids map:
the *owner* of a memory is its ``user_id``, else its ``agent_id``, else its ``run_id``; the owner
is the engram agent scope it is stored in, so owners never see each other's memories. All three
ids are kept in the memory's metadata and narrow every read, as mem0's filters do. The facade is
the application (as a mem0 ``Memory`` is): ``get``/``update``/``delete``/``history`` take a bare
memory id, whichever owner holds it.

Differences (docs/integrations.md lists them for users): ``infer=True`` extracts facts with
engram's rule-based extractor unless an ``extractor`` (e.g. ``LLMExtractor``) is given; identical
content for the same owner is stored once; ``history`` is rebuilt from engram's versions, so a
deleted memory has none; ``reset`` forgets the memories made through this facade (owners found in
the store), not the whole database; filters take ``key: value`` equality only; search scores are
engram's scores (``threshold`` is engram's ``min_relevance``); a missing memory raises
``NotFoundError`` (a ``LookupError``), bad input ``ValidationError`` (a ``ValueError``, as mem0's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engram.agent.extract import FactExtractor, RuleExtractor
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.model import MAX_LIST_LIMIT, Scope
from engram.model import Memory as EngramMemory

IDS = ("user_id", "agent_id", "run_id")
_RESERVED = (*IDS, "role")


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
            raise ValidationError(name, f"{value!r} is not an id", "a non-empty string without spaces")
        ids[name] = value.strip()
    if not ids:
        raise ValidationError(where, "no user_id, agent_id or run_id given", "at least one of user_id, agent_id, run_id")
    return ids


def _item(memory: EngramMemory, score: float | None = None) -> dict[str, Any]:
    """A memory in mem0's result shape: ids promoted to the top, other metadata under ``metadata``."""
    extra = {k: v for k, v in memory.metadata.items() if k not in _RESERVED}
    item: dict[str, Any] = {
        "id": memory.id,
        "memory": memory.content,
        "hash": hashlib.md5(memory.content.encode()).hexdigest(),  # noqa: S324 - a content fingerprint, as mem0's
        "metadata": extra or None,
        "created_at": _iso(memory.created_at),
        "updated_at": _iso(memory.updated_at),
    }
    if score is not None:
        item["score"] = score
    item.update({k: memory.metadata[k] for k in _RESERVED if k in memory.metadata})
    return item


class Memory:
    """mem0's ``Memory`` API over engram. ``Memory()`` opens the configured engram store
    (``Engram.from_settings()``); pass ``engram=`` to use one you built."""

    def __init__(self, engram: Engram | None = None, *, extractor: FactExtractor | None = None) -> None:
        self.engram = engram if engram is not None else Engram.from_settings()
        self.extractor = extractor if extractor is not None else RuleExtractor()

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Open engram with these settings (engram's names: ``path``, ``backend``, ``embeddings``...);
        mem0's provider sections have no meaning here and are refused by name."""
        foreign = [k for k in ("vector_store", "llm", "embedder", "graph_store", "history_db_path") if k in config_dict]
        if foreign:
            raise ValidationError(f"config.{foreign[0]}", "is a mem0 provider setting",
                                  "engram settings (backend, path, database_url, embeddings, ...)")
        return cls(Engram.from_settings(**dict(config_dict)))

    # --- scopes ---------------------------------------------------------------------------------
    def _view(self, ids: Mapping[str, str]) -> Engram:
        owner = ids.get("user_id") or ids.get("agent_id") or ids["run_id"]
        try:
            return self.engram.for_agent(owner, origin="mem0")
        except ValidationError as exc:
            name = next(k for k in IDS if k in ids)
            raise ValidationError(name, exc.problem, exc.allowed) from None

    def _find(self, memory_id: str) -> tuple[EngramMemory, Engram]:
        """The memory with this id, whoever owns it, and a view of its owner."""
        if not isinstance(memory_id, str) or not memory_id:
            raise ValidationError("memory_id", f"{memory_id!r} is not a memory id", "an id from add/get_all/search")
        found = [m for m in self.engram.store.get_many([memory_id]) if m.scope.kind == "agent"]
        if not found:
            raise NotFoundError("memory", memory_id)
        return found[0], self.engram.for_agent(found[0].scope.agent or "default", origin="mem0")

    def _narrow(self, ids: Mapping[str, str], filters: Mapping[str, Any] | None) -> Filters:
        wanted: dict[str, Any] = dict(ids)
        for key, value in (filters or {}).items():
            if key in IDS:
                continue
            if isinstance(value, Mapping | list) or key in ("AND", "OR", "NOT"):
                raise ValidationError(f"filters.{key}", "operators are not supported", "key: value equality")
            wanted[key] = value
        return Filters(metadata=wanted)

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
    ) -> dict[str, list[dict[str, Any]]]:
        """Store memories from a message, or a conversation (``[{"role", "content"}, ...]``).

        ``infer=True`` stores the facts the extractor finds in the user's messages (saying the same
        thing again, or changing it, updates the fact: event ``UPDATE``); ``infer=False`` stores each
        non-system message as it is. Returns ``{"results": [{"id", "memory", "event"}, ...]}``."""
        ids = _entity_ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, "add")
        if memory_type is not None or prompt is not None:
            raise ValidationError("memory_type" if memory_type is not None else "prompt",
                                  "procedural memories and custom prompts need mem0's LLM pipeline", "leave it unset")
        conversation = _messages(messages)
        base = {**dict(metadata or {}), **ids}
        view = self._view(ids)
        results = []
        for i, message in enumerate(conversation):
            role = message["role"]
            if role == "system":
                continue
            if not infer:
                outcome = [(view.remember(message["content"], metadata={**base, "role": role}), None)]
            elif role == "user":
                reply = next((m["content"] for m in conversation[i + 1:] if m["role"] == "assistant"), "")
                outcome = [(view.remember(fact.content, key=fact.key, type=fact.type, metadata=base), fact)
                           for fact in self.extractor.extract(message["content"], reply, source="mem0")]
            else:
                continue
            for written, _ in outcome:
                if written.action in ("created", "updated"):
                    event = "ADD" if written.action == "created" else "UPDATE"
                    entry = {"id": written.memory.id, "memory": written.memory.content, "event": event}
                    if metadata:
                        entry["metadata"] = dict(metadata)
                    results.append(entry)
        return {"results": results}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, or None."""
        try:
            memory, _ = self._find(memory_id)
        except NotFoundError:
            return None
        return _item(memory)

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        top_k: int | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The owner's memories, newest first; ids as arguments (mem0 1.x) or in ``filters`` (2.x)."""
        ids = self._ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters, "get_all")
        limit = top_k if top_k is not None else limit
        memories = self._view(ids).list(self._narrow(ids, filters), limit=limit, scope="agent")
        return {"results": [_item(m) for m in memories]}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        top_k: int | None = None,
        threshold: float | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """The owner's memories most relevant to ``query``, best first, each with its ``score``."""
        ids = self._ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, filters, "search")
        limit = top_k if top_k is not None else limit
        result = self._view(ids).recall(query, limit=limit, filters=self._narrow(ids, filters),
                                        min_relevance=threshold)
        return {"results": [_item(hit.memory, hit.score) for hit in result]}

    def update(self, memory_id: str, data: str, metadata: Mapping[str, Any] | None = None) -> dict[str, str]:
        """Replace a memory's text (the old text goes to its history); ``metadata`` is merged in."""
        memory, view = self._find(memory_id)
        merged = {**memory.metadata, **{k: v for k, v in (metadata or {}).items() if k not in IDS}}
        view.update(memory.id, content=data, metadata=merged)
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        memory, view = self._find(memory_id)
        view.forget(memory.id, reason="mem0 delete")
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Forget every memory with these ids (at least one is required; ``reset`` forgets all)."""
        ids = _entity_ids({"user_id": user_id, "agent_id": agent_id, "run_id": run_id}, "delete_all")
        view = self._view(ids)
        for memory in _every(view, self._narrow(ids, None)):
            view.forget(memory.id, reason="mem0 delete_all")
        return {"message": "Memories deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes, oldest first, in mem0's shape (``old_memory``, ``new_memory``, ``event``)."""
        try:
            memory, view = self._find(memory_id)
        except NotFoundError:
            return []
        contents = [v.content for v in view.versions(memory.id)] + [memory.content]
        times = [memory.created_at] + [v.replaced_at for v in view.versions(memory.id)]
        entries = []
        for n, content in enumerate(contents):
            entries.append({
                "id": f"{memory.id}:{n}", "memory_id": memory.id,
                "old_memory": contents[n - 1] if n else None, "new_memory": content,
                "event": "UPDATE" if n else "ADD",
                "created_at": _iso(memory.created_at), "updated_at": _iso(times[n]) if n else None,
                "is_deleted": False, "actor_id": None, "role": memory.metadata.get("role"),
            })
        return entries

    def reset(self) -> None:
        """Forget every memory made through this facade, of every owner in the store."""
        for scope_text in self.engram.stats().by_scope:
            scope = Scope.parse(scope_text)
            if scope.kind != "agent" or scope.agent is None:
                continue
            view = self.engram.for_agent(scope.agent, origin="mem0")
            for memory in _every(view):
                if any(k in memory.metadata for k in IDS):
                    view.forget(memory.id, reason="mem0 reset")

    def close(self) -> None:
        self.engram.close()


def _messages(messages: Any) -> list[dict[str, str]]:
    """mem0's accepted shapes: a string (one user message), one message dict, or a list of them."""
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
            raise ValidationError(f"messages[{i}].role", f"unknown role {role!r}", ["user", "assistant", "system"])
        out.append({"role": role, "content": message["content"]})
    return out


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
