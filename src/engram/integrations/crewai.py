"""CrewAI with engram: ``Agent(role=..., tools=engram_tools(mem))``.

``engram_tools(mem)`` gives a CrewAI agent ``remember``, ``recall``, ``forget`` and ``versions`` (a
memory's earlier contents; reads only) tools over one engram agent's memory: the agent of the
engine (view) it is given, ``mem.for_agent("researcher")`` for another, which never sees this one's
memories. Each is a CrewAI ``BaseTool`` subclass (``RememberTool``, ``RecallTool``, ``ForgetTool``,
``VersionsTool``), to take one alone (``tools=[RecallTool(mem)]``); their descriptions and
argument schemas are ``tool_docs``' texts, what engram's other toolsets show the model, and their
results are JSON text, the shapes engram's MCP tools return. CrewAI's own tool options
(``result_as_answer``, ``max_usage_count``, ...: ``OPTIONS``) are checked before CrewAI's pydantic
``BaseTool`` sees them, as every adapter's constructor checks what it is given: a keyword that is not
one refused naming it (BaseTool ignored it), a wrong value as engram's ``ValidationError`` naming the
option, a yes/no option True or False only.

CrewAI runs a tool's synchronous ``_run`` (through ``BaseTool.run``, or its structured-tool
wrapper in a text-format run; 1.15 never awaits ``_arun``), so the tools are synchronous: given
an ``AsyncEngram``, they use the engine inside it (``AsyncEngram.engram``, the same store and agent).

Errors. An argument engram refuses, or a memory that is not there, is returned as a CrewAI
``ToolFailure`` in engram's MCP tool words (``invalid importance: ...``, ``memory not found:
...; recall first ...``), with nothing stored: the model reads it as the call's result and can
correct it, and CrewAI records the failure (``TaskOutput.tool_failures``, a
``ToolFailureDetectedEvent``) under its ``tool_failure_policy`` (by default it goes on; ``raise``
stops the task). An argument of the wrong type is refused by CrewAI before the tool runs
(``Tool 'remember' arguments validation failed: ...``, naming the argument). Any other engram
error (the store failed) is raised, and CrewAI shows the model ``Error executing tool: ...`` and
emits ``ToolUsageErrorEvent``.

Checkpoints. A crew with CrewAI checkpointing (``Crew(checkpoint=...)``) writes its agents'
tools into the checkpoint as data, and ``Crew.from_checkpoint`` / ``kickoff(from_checkpoint=...)``
rebuild them from it. The engine cannot be written there (it is a live store), so a tool's dump
holds the scope it acts for (``engram_scope``: ``agent:researcher``) and the restored tool takes
the engine most recently given to engram tools for that scope in this process: the same engine,
shared, never a copy. In a new process, build the crew with its tools first (``engram_tools(mem)``)
and resume with ``crew.kickoff(from_checkpoint=...)``; restoring with no engine given for the scope
is refused with a ``ValidationError`` naming ``engram``, before anything runs.

Never cached. A crew or agent that opts into CrewAI's tool-result cache (``Crew(cache=True)``)
keeps a tool's result by its arguments for the rest of the run unless the tool's ``cache_function``
says no: a second identical ``recall`` would read the first answer, not what was remembered since,
and a repeated ``remember`` would store nothing. These tools' ``cache_function`` always says no, and
is not an option.

Per user. CrewAI has no user of its own: ``kickoff(inputs=...)`` is the application's free dict,
interpolated into prompts. One tool set is one engram agent, chosen where it is built
(``engram_tools(mem.for_agent(agent_for_ids("crewai:", user_id=user_id)))`` for the crew run for
that user: ``integrations.agent_for_ids`` gives one agent per id, whatever it holds).

CrewAI's own memory (``crewai.memory.Memory``: ``Crew(memory=...)``, its ``Search memory`` and
``Save to memory`` tools) is not kept in engram. Its storage contract (``StorageBackend``) is a
vector store: ``search`` receives CrewAI's own query embedding (``query_embedding``), never the
query text; ``Memory`` itself embeds, analyses with its LLM, scores and filters. engram's recall
(full text, vectors from its own embedder, and its ranking) could not stand behind it, only a copy
of CrewAI's vectors, so no ``StorageBackend`` is provided: give a crew these tools instead.

Telemetry. CrewAI sends anonymous usage telemetry to its servers unless ``CREWAI_DISABLE_TELEMETRY``
(or ``OTEL_SDK_DISABLED``) is set, and checks PyPI for a newer release in verbose runs unless
``CREWAI_DISABLE_VERSION_CHECK`` is; engram sends nothing and sets neither (they are the
application's settings, read by CrewAI from the environment): see docs/integrations.md.
"""

from __future__ import annotations

import json
import weakref
from typing import Any, get_args

from pydantic import BaseModel, Field, PrivateAttr, computed_field, create_model
from pydantic import ValidationError as PydanticError

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.integrations import ENGINE, checked_call, flag_option, missing, refuse_unknown, tool_docs
from engram.interfaces import tool_calls
from engram.interfaces.present import error_text, tool_recall, tool_write
from engram.model import parse_integer

try:
    from crewai.tools import BaseTool
    from crewai.tools.base_tool import EnvVar
    from crewai.tools.tool_failure import ToolFailure, ToolFailurePolicy
except ImportError as exc:  # pragma: no cover - the crewai pass installs it
    raise missing("crewai", "crewai") from exc

__all__ = ["ForgetTool", "RecallTool", "RememberTool", "VersionsTool", "engram_tools"]

# What the model caused and can correct: returned to it, never raised.
_REFUSED = (ValidationError, NotFoundError)


def _arguments(name: str, doc: str, **types: Any) -> tuple[str, type[BaseModel]]:
    """The tool's description and its argument schema: ``types`` (each ``(annotation, default)``,
    ``...`` for required), each described by its line in ``doc``. An optional argument is nullable
    so that a model in OpenAI's strict mode (CrewAI sends every schema strict, every argument
    required) can leave it to engram's default by sending null."""
    summary, described = tool_docs.split(doc)
    assert list(described) == list(types), f"tool_docs describes {list(described)}, {name} takes {list(types)}"
    fields = {arg: (annotation, Field(default, description=described[arg])) for arg, (annotation, default) in types.items()}
    return summary, create_model(f"{name.title()}Arguments", **fields)


def _never_cached(_arguments: Any = None, _result: Any = None) -> bool:
    # A memory tool's answer depends on what was stored since: CrewAI must call it every time.
    return False


def _refused(exc: ValidationError | NotFoundError) -> ToolFailure:
    """CrewAI's declared tool failure, in engram's MCP tool words (the model reads the message)."""
    return ToolFailure(message=error_text(exc), details={"field": exc.field} if isinstance(exc, ValidationError) else {})


def _json(value: dict[str, Any]) -> str:
    # CrewAI sends a tool's string result to the model as it is: JSON, the MCP tools' shapes.
    return json.dumps(value, ensure_ascii=False)


# The engine most recently given to a tool, by the scope it acts for: where a tool rebuilt from a
# CrewAI checkpoint (which holds only the scope) finds its engine. Weak, so it keeps no engine open,
# and an entry goes with its engine (a server building tools per user would otherwise keep a key
# for every user it ever served).
_GIVEN: weakref.WeakValueDictionary[str, Engram] = weakref.WeakValueDictionary()


def _given(scope: Any) -> Engram:
    """The engine for a tool restored from a checkpoint; raises ``ValidationError`` naming ``engram``."""
    engine = _GIVEN.get(scope) if isinstance(scope, str) else None
    if engine is None:
        raise ValidationError(
            "engram", f"a CrewAI checkpoint holds the tools' scope ({scope!r}), not their engine, and no engram "
            "tools were built for it in this process",
            "build the crew with engram_tools(mem) for that agent first, then crew.kickoff(from_checkpoint=...)")
    return engine


# CrewAI's BaseTool fields that are each tool's own, never an option: its arguments' and result's
# schemas (what its ``_run`` takes and gives) and its cache function (never cached).
_OWN = {"args_schema": "the tool's arguments are engram's", "result_schema": "the tool's result is engram's JSON text",
        "cache_function": "a memory tool is never cached: its answer depends on what was stored since"}
# The options a tool takes: the rest of BaseTool's fields, those a checkpoint's dump gives back among them.
OPTIONS: tuple[str, ...] = tuple(name for name in BaseTool.model_fields if name not in _OWN)


def _checked_options(owner: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked before CrewAI's pydantic ``BaseTool`` sees them, as engram's
    ``ValidationError`` naming the option: BaseTool ignores a keyword it does not know (a mistyped
    ``max_usage=2`` left the tool unlimited, unsaid), reads ``result_as_answer="no"`` as False, and
    answers ``max_usage_count="2"`` with a ``TypeError`` and ``name=1`` in pydantic's words."""
    for name, why in _OWN.items():
        if name in options:
            raise ValidationError(name, f"is set by {owner} ({why})", sorted(OPTIONS))
    refuse_unknown(owner, options, OPTIONS)
    checked = dict(options)
    for field in ("name", "description"):
        if field in checked and (not isinstance(checked[field], str) or not checked[field].strip()):
            raise ValidationError(field, f"got {checked[field]!r}", f"a non-empty tool {field}")
    for flag in ("result_as_answer", "description_updated"):
        if flag in checked:
            checked[flag] = flag_option(flag, checked[flag])
    if checked.get("max_usage_count") is not None:
        checked["max_usage_count"] = parse_integer(checked["max_usage_count"], "max_usage_count", 1,
                                                   allowed="1 or more, or None (no limit)")
    if "current_usage_count" in checked:
        checked["current_usage_count"] = parse_integer(checked["current_usage_count"], "current_usage_count", 0)
    if checked.get("tool_failure_policy") is not None:
        try:
            checked["tool_failure_policy"] = ToolFailurePolicy(checked["tool_failure_policy"])
        except ValueError:
            raise ValidationError("tool_failure_policy", f"got {checked['tool_failure_policy']!r}",
                                  [p.value for p in ToolFailurePolicy] + ["None (the agent's and task's)"]) from None
    if "env_vars" in checked:
        checked["env_vars"] = _env_vars(checked["env_vars"])
    return checked


def _env_vars(value: Any) -> list[EnvVar]:
    """CrewAI's ``env_vars`` option: ``EnvVar``s, or their fields as dicts (a checkpoint's dump)."""
    allowed = "a list of CrewAI EnvVar (or dicts of its name, description, required, default)"
    if not isinstance(value, list | tuple):
        raise ValidationError("env_vars", f"got {type(value).__name__}", allowed)
    kept = []
    for i, item in enumerate(value):
        if isinstance(item, EnvVar):
            kept.append(item)
            continue
        if not isinstance(item, dict):
            raise ValidationError(f"env_vars[{i}]", f"got {type(item).__name__}", allowed)
        # CrewAI's model checks the fields' types; what it would not refuse is checked first: a key it
        # does not know (ignored) and a yes/no ``required`` ("no" read as False).
        refuse_unknown("EnvVar", item, EnvVar.model_fields, within=f"env_vars[{i}]")
        if "required" in item:
            item = {**item, "required": flag_option(f"env_vars[{i}].required", item["required"])}
        try:
            kept.append(EnvVar.model_validate(item))
        except PydanticError as exc:
            raise _env_var_error(i, item, exc) from None
    return kept


def _env_var_error(i: int, item: dict[str, Any], exc: PydanticError) -> ValidationError:
    """The first field CrewAI's ``EnvVar`` refused in ``env_vars[i]``, as engram's error naming
    ``env_vars[i].<field>`` and what its annotation takes (``text``, ``text, or None``)."""
    key = str(exc.errors()[0]["loc"][0])
    kinds = [None if kind is type(None) else kind for kind in (get_args(EnvVar.model_fields[key].annotation)
                                                                 or (EnvVar.model_fields[key].annotation,))]
    allowed = ", or ".join(_KINDS.get(kind, getattr(kind, "__name__", str(kind))) for kind in kinds)
    return ValidationError(f"env_vars[{i}].{key}", "is required" if key not in item else f"got {type(item[key]).__name__}",
                           allowed)


# How ``_env_var_error`` words a type an ``EnvVar`` field takes.
_KINDS: dict[Any, str] = {str: "text", bool: "True or False", None: "None"}


class _EngramTool(BaseTool):
    """What the tools share: the engine they act for, and no result cache."""

    # The engine is the application's, not data to dump into a CrewAI checkpoint or copy.
    _engram: Engram = PrivateAttr()

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> Any:
        """A tool rebuilt from its dump (CrewAI's checkpoint restore): its engine is the one given for
        its ``engram_scope`` in this process (raises ``ValidationError`` naming ``engram`` if none);
        its schemas are the class's own, its CrewAI options (usage count, ...) the dump's."""
        if not isinstance(obj, dict):
            return super().model_validate(obj, **kwargs)
        # The dump's computed fields, and the fields that are the tool's own (its schemas, its
        # cache function), are not options: the class gives them again.
        dumped = {k: v for k, v in obj.items() if k not in {"engram_scope", "tool_type", *_OWN}}
        return cls(_given(obj.get("engram_scope")), **dumped)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def engram_scope(self) -> str:
        """The scope the tool acts for (``agent:assistant``): what a CrewAI checkpoint keeps of its engine."""
        return str(self._engram.scope)

    @checked_call("{owner}(mem)")  # RememberTool() is engram's error saying what it takes, not Python's
    def __init__(self, engram: Engram | AsyncEngram, **options: Any) -> None:
        """``engram``: the ``Engram`` (or ``AsyncEngram``, whose engine is used) whose agent the
        tool acts for (required); ``options`` are CrewAI's ``BaseTool`` fields (``OPTIONS``:
        ``result_as_answer``, ``max_usage_count``, ``tool_failure_policy``, ``name``, ...), checked by
        engram's rules (``result_as_answer="no"`` is refused, not read as False). Raises
        ``ValidationError`` naming ``engram`` (missing, or not an engine), an option it refuses, or a
        keyword that is not one (``args_schema``, ``result_schema`` and ``cache_function`` are the tool's own)."""
        if isinstance(engram, AsyncEngram):
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", f"{ENGINE}: {type(self).__name__}(mem)")
        super().__init__(**_checked_options(type(self).__name__, options), cache_function=_never_cached)
        self._engram = engram
        _GIVEN[str(engram.scope)] = engram

    @property
    def engram(self) -> Engram:
        """The engine (view) whose agent this tool acts for."""
        return self._engram


_REMEMBER, _REMEMBER_ARGUMENTS = _arguments(
    "remember", tool_docs.REMEMBER, content=(str, ...), key=(str | None, None), tags=(list[str] | None, None),
    category=(str | None, None), type=(str | None, None), importance=(float | None, None))
_RECALL, _RECALL_ARGUMENTS = _arguments(
    "recall", tool_docs.RECALL, query=(str, ...), limit=(int | None, None), min_relevance=(float | None, None),
    tags=(list[str] | None, None))
_FORGET, _FORGET_ARGUMENTS = _arguments(
    "forget", tool_docs.FORGET, memory_id=(str | None, None), key=(str | None, None), query=(str | None, None),
    tag=(str | None, None), older_than_days=(float | None, None), reason=(str | None, None),
    dry_run=(bool | None, None))
_VERSIONS, _VERSIONS_ARGUMENTS = _arguments(
    "versions", tool_docs.VERSIONS, memory_id=(str | None, None), key=(str | None, None))


class RememberTool(_EngramTool):
    """engram's ``remember``: stores one memory of the engine's agent."""

    name: str = "remember"
    description: str = _REMEMBER
    args_schema: type[BaseModel] = _REMEMBER_ARGUMENTS

    def _run(self, content: str, key: str | None = None, tags: list[str] | None = None, category: str | None = None,
             type: str | None = None, importance: float | None = None) -> str | ToolFailure:  # noqa: A002
        # Null (a strict-mode model's "not given") leaves engram's own default.
        given = {"category": category, "importance": importance}
        try:
            result = self._engram.remember(content, key=key, tags=tags, type=type,
                                           **{k: v for k, v in given.items() if v is not None})
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_write(result))


class RecallTool(_EngramTool):
    """engram's ``recall``: hybrid recall over the memories the engine's agent sees."""

    name: str = "recall"
    description: str = _RECALL
    args_schema: type[BaseModel] = _RECALL_ARGUMENTS

    def _run(self, query: str, limit: int | None = None, min_relevance: float | None = None,
             tags: list[str] | None = None) -> str | ToolFailure:
        try:
            result = self._engram.recall(query, limit=limit, min_relevance=min_relevance,
                                         filters=None if tags is None else Filters(tags=tags))
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_recall(result.hits, result.notes))


class ForgetTool(_EngramTool):
    """engram's ``forget``: removes memories of the engine's agent, each with its audit record."""

    name: str = "forget"
    description: str = _FORGET
    args_schema: type[BaseModel] = _FORGET_ARGUMENTS

    def _run(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
             tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
             dry_run: bool | None = None) -> str | ToolFailure:
        try:
            return _json(tool_calls.forget(self._engram, memory_id, key, query, tag, older_than_days, reason,
                                           bool(dry_run)))
        except _REFUSED as exc:
            return _refused(exc)


class VersionsTool(_EngramTool):
    """engram's ``versions``: the earlier contents of one memory of the engine's agent (reads only)."""

    name: str = "versions"
    description: str = _VERSIONS
    args_schema: type[BaseModel] = _VERSIONS_ARGUMENTS

    def _run(self, memory_id: str | None = None, key: str | None = None) -> str | ToolFailure:
        try:
            return _json(tool_calls.versions(self._engram, memory_id, key))
        except _REFUSED as exc:
            return _refused(exc)


TOOLS: tuple[type[_EngramTool], ...] = (RememberTool, RecallTool, ForgetTool, VersionsTool)


@checked_call("{owner}(mem)")  # engram_tools() is engram's error saying what it takes, as RememberTool() is
def engram_tools(engram: Engram | AsyncEngram, *,
                 include: tuple[str, ...] = ("remember", "recall", "forget", "versions"),
                 **options: Any) -> list[BaseTool]:
    """The ``remember``, ``recall``, ``forget`` and ``versions`` tools over ``engram``'s agent, for an agent's
    ``tools=[...]``; ``include`` picks some (``("recall", "versions")`` for a read-only agent), ``options``
    go to each (CrewAI's ``BaseTool`` fields, as the tools take them; ``name`` and ``description``
    only with one tool included). Raises ``ValidationError`` naming ``engram``, ``include`` or an
    option it refuses."""
    by_name = {tool.model_fields["name"].default: tool for tool in TOOLS}
    if isinstance(include, str) or not all(isinstance(n, str) and n in by_name for n in include) or not include:
        raise ValidationError("include", f"got {include!r}", "a non-empty tuple of remember, recall, forget, versions")
    refuse_unknown("engram_tools", options, [*OPTIONS, "engram", "include"])
    chosen = dict.fromkeys(include)
    for field in ("name", "description"):
        if field in options and len(chosen) > 1:  # four tools of one name: the model could call only one
            raise ValidationError(field, f"given for {len(chosen)} tools, which it would name alike",
                                  f"one tool's {field}: include=(...) of one tool, or RecallTool(mem, {field}=...)")
    return [by_name[name](engram, **options) for name in chosen]
