"""Agno with engram: ``Agent(model=..., tools=[EngramTools(mem)])``.

``EngramTools`` is an Agno ``Toolkit`` giving the agent ``remember``, ``recall``, ``forget`` and
``versions`` (a memory's earlier contents; reads only) tools over one engram agent's memory: the
agent of the engine (view) it is given, ``mem.for_agent("support-bot")`` for another, which never
sees this one's memories. Their docstrings and parameters are what the model is shown; results are JSON text, the shapes
engram's MCP tools return.

Given an ``Engram``, the tools are synchronous: ``agent.run`` calls them, and ``agent.arun`` runs
them in a worker thread (Agno does so for any sync tool). Given an ``AsyncEngram``, the toolkit
also registers async variants under the same names, which ``agent.arun`` prefers: they go through
the ``AsyncEngram``'s writer and reader threads (remembers awaited together share one batch).

Errors. Agno hands whatever a tool raises to the model as the tool's result text, so there is
no way to raise out of a run from a tool. An argument engram refuses, or a memory that is not
there, raises Agno's ``RetryAgentRun`` with engram's MCP tool text (``invalid importance: ...``,
``memory not found: ...; recall first ...``): the model reads it as a failed call it can correct,
and Agno logs it at debug level only. Any other engram error (the store failed, settings
unusable) is left to Agno, which logs it as a warning with its traceback for the application
and shows the model its message.

Per user. With ``per_user=True`` each run's ``user_id`` (``agent.run(..., user_id="u-42")``,
Agno's own key for user memories) picks the engram agent ``agno:u-42``: users never read each
other's memories, and the prefix keeps a user called ``assistant`` apart from an application
agent of that name (as LangGraph's ``lg:``). The id is written by ``integrations.agent_for_ids``
(``José`` is ``agno:Jos@c3@a9``), so no id a user could choose names another user's agent.
Agno injects the run's context into the tools itself and never lets the model set it, so the
model cannot name another user. A run without a ``user_id`` is refused (a failed call naming
``user_id``) rather than written to a shared agent.
Agno's ``session_id`` is not mapped: engram's session scope would hide a memory from the user's
next session, which is what long-term memory is for. Agno's agent id is not mapped either: one
toolkit is one engram agent, chosen where it is built.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, get_args

from engram import jsondoc
from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.integrations import agent_for_ids, checked_call, checked_prefix, flag_option, missing, refuse_unknown, tool_docs
from engram.interfaces import tool_calls
from engram.interfaces.present import error_text, tool_recall, tool_write
from engram.model import RecallResult, WriteResult, parse_integer

try:
    from agno.exceptions import RetryAgentRun
    from agno.run import RunContext
    from agno.tools import Toolkit
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("agno", "agno") from exc

ORIGIN = "agno"
DEFAULT_USER_PREFIX = "agno:"


@contextmanager
def _for_the_model() -> Iterator[None]:
    """Engram's errors that the model caused, as a failed tool call whose text it reads."""
    try:
        yield
    except (ValidationError, NotFoundError) as exc:
        raise RetryAgentRun(error_text(exc)) from exc


def _json(value: dict[str, Any]) -> str:
    # Agno sends a tool's result to the model as str(result): JSON, not a Python repr.
    return json.dumps(value, ensure_ascii=False)


def _remembered(result: WriteResult) -> str:
    return _json(tool_write(result))


def _recalled(result: RecallResult) -> str:
    return _json(tool_recall(result.hits, result.notes))


# The keywords of Agno's ``Toolkit`` an ``EngramTools`` passes on (its tools are its own), and its own.
_TOOLKIT = {name: parameter for name, parameter in inspect.signature(Toolkit.__init__).parameters.items()
            if name not in ("self", "name", "tools", "async_tools")}
_OWN = ("engram", "per_user", "user_prefix", "name")
NAMES = ("remember", "recall", "forget", "versions")
# Toolkit's lists of tool names (``include_tools``, ``requires_confirmation_tools``, ...). Agno reads
# a string there as a set of letters (``include_tools="recall"`` failed in its own words) or by
# substring (``requires_confirmation_tools="recall, forget"`` held for both), and only logs a name
# in the lists past include/exclude that is no tool's.
_NAME_LISTS = frozenset(name for name, parameter in _TOOLKIT.items() if "list[str]" in str(parameter.annotation).lower())


def _tool_names(field: str, value: Any) -> list[str] | None:
    """A toolkit list option as Agno takes it: None, or a list of this toolkit's tool names. Raises
    ``ValidationError`` naming ``field`` (or ``field[i]`` for a name that is no tool's), and
    ``include_tools`` when empty: Agno registers none of a toolkit's own tools for it, but all of a
    decorated toolkit's, so ``[]`` means no one thing; a toolkit that includes none has no use."""
    allowed = f"a list of tool names from {', '.join(NAMES)}, or None"
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple | set | frozenset):
        raise ValidationError(field, f"got {type(value).__name__} {jsondoc.shown(value)}", allowed)
    if field == "include_tools" and not value:
        raise ValidationError(field, "is empty: the toolkit would have no tools",
                              f"a non-empty list of tool names from {', '.join(NAMES)}, or None (all of them)")
    for i, name in enumerate(value):
        if name not in NAMES:
            raise ValidationError(f"{field}[{i}]", f"{jsondoc.shown(name)} is not one of the toolkit's tools", list(NAMES))
    return list(value)


def _some_tools_left(include: list[str] | None, exclude: list[str] | None) -> None:
    """Refuse ``exclude_tools`` that, with ``include_tools`` (None: all of them), leaves the toolkit
    no tool, as an empty ``include_tools`` is refused: Agno builds such a toolkit without a word and
    the agent runs with no memory. Raises ``ValidationError`` naming ``exclude_tools``."""
    included = list(NAMES) if include is None else include
    if exclude and not set(included) - set(exclude):
        which = "every tool" if include is None else f"every tool include_tools includes ({', '.join(included)})"
        raise ValidationError("exclude_tools", f"excludes {which}: the toolkit would have no tools",
                              f"a list leaving at least one of {', '.join(included)}, or None (nothing excluded)")


# How ``_typed`` words a type a Toolkit keyword's annotation names.
_KINDS: dict[Any, str] = {str: "text", int: "0 or more (seconds)", type(None): "None"}


def _typed(field: str, value: Any) -> Any:
    """Any other Toolkit keyword (``id``, ``instructions``, ``cache_ttl``, ``cache_dir``,
    ``timeout``, ...) checked by its annotation in Agno's signature: text, a whole number (0 or
    more: all of Toolkit's are seconds; not a bool, nor "5"), or None where it is optional. Agno
    stored them unchecked, to fail later (a ``cache_ttl`` of "1h" when a result is cached, an
    ``instructions`` of 3 in the agent's prompt). A keyword whose annotation names another type is
    left to Agno. Raises ``ValidationError`` naming ``field``."""
    annotation = _TOOLKIT[field].annotation
    kinds = get_args(annotation) or (annotation,)
    if not set(kinds) <= set(_KINDS):
        return value
    allowed = ", or ".join(_KINDS[kind] for kind in kinds)
    if value is None and type(None) in kinds:
        return None
    if int in kinds:
        return parse_integer(value, field, 0, allowed=allowed)
    if isinstance(value, str):
        if field in _NOT_GIVEN_WHEN_EMPTY and not value.strip():
            raise ValidationError(field, f"got {jsondoc.shown(value)}, which Agno reads as not given",
                                  f"a non-empty text, or None ({_NOT_GIVEN_WHEN_EMPTY[field]})")
        return value
    raise ValidationError(field, f"got {type(value).__name__} {jsondoc.shown(value)}", allowed)


# Toolkit's text keywords whose empty value Agno reads as not given, yet does not replace with what
# None gives: ``id=""`` stays the toolkit's id, which Agno's registry and Studio read as none (``if
# id``, ``id or name``); ``cache_dir=""`` caches in the shared temporary folder (``cache_dir or tempdir``).
# (An empty ``instructions`` is none, as None is.) What None gives, for the error to say.
_NOT_GIVEN_WHEN_EMPTY = {"id": "an id made from the toolkit's name", "cache_dir": "the system's temporary folder"}


class EngramTools(Toolkit):
    """``remember``, ``recall``, ``forget`` and ``versions`` tools over one engram agent's memory (or, with
    ``per_user``, over the memory of the run's user)."""

    @checked_call("{owner}(mem)")
    def __init__(self, engram: Engram | AsyncEngram, *, per_user: bool = False,
                 user_prefix: str = DEFAULT_USER_PREFIX, name: str = "engram", **toolkit: Any) -> None:
        """``engram``: the ``Engram`` or ``AsyncEngram`` (view) whose agent the tools act for; an
        ``AsyncEngram`` adds async variants for ``agent.arun``. ``per_user``: act instead for the
        agent ``user_prefix`` + the run's ``user_id``. Other keywords go to Agno's ``Toolkit``
        (``include_tools``, ``requires_confirmation_tools``, ``instructions``, ...); its yes/no ones
        (``cache_results``, ...) by the rule ``per_user`` follows, its lists of tool names
        (``include_tools``, ...) as lists of ``NAMES`` (``include_tools`` not empty, nor every tool
        it includes excluded), the rest by the type Toolkit declares (``_typed``: ``id`` and
        ``cache_dir`` not empty). Raises ``ValidationError`` naming ``engram``, ``name``,
        ``user_prefix``, a Toolkit keyword, a list's item (``include_tools[0]``), or a keyword
        neither takes."""
        refuse_unknown("EngramTools", toolkit, [*_OWN, *_TOOLKIT])
        if not isinstance(name, str) or not name.strip():  # Agno failed on it with an AttributeError
            raise ValidationError("name", f"got {name!r}", "a non-empty toolkit name")
        for key, value in toolkit.items():
            if isinstance(_TOOLKIT[key].default, bool):  # Agno takes any value, read later by its own rules
                toolkit[key] = flag_option(key, value)
            elif key in _NAME_LISTS:
                toolkit[key] = _tool_names(key, value)
            else:
                toolkit[key] = _typed(key, value)
        _some_tools_left(toolkit.get("include_tools"), toolkit.get("exclude_tools"))
        if isinstance(engram, AsyncEngram):
            self.aengram: AsyncEngram | None = engram
            self.engram: Engram = engram.engram
        elif isinstance(engram, Engram):
            self.aengram, self.engram = None, engram
        else:
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        self.per_user = flag_option("per_user", per_user)  # a truthy "no" would have mapped users
        self.user_prefix = checked_prefix("user_prefix", user_prefix, DEFAULT_USER_PREFIX)
        async_tools = None
        if self.aengram is not None:
            async_tools = [(self.aremember, "remember"), (self.arecall, "recall"), (self.aforget, "forget"),
                           (self.aversions, "versions")]
        super().__init__(name=name, tools=[self.remember, self.recall, self.forget, self.versions],
                         async_tools=async_tools, **toolkit)

    # --- whose memory -------------------------------------------------------------------------
    def _agent(self, run_context: RunContext | None) -> str | None:
        """The engram agent a call acts for: None for the toolkit's own, else the run's user's.
        Raises ``ValidationError`` on ``user_id`` (the application's to fix, not the model's)."""
        if not self.per_user:
            return None
        user_id = run_context.user_id if run_context is not None else None
        if not user_id:
            raise ValidationError("user_id", "the run has none, and these tools keep memories per user",
                                  "agent.run(..., user_id=...), or EngramTools(..., per_user=False)")
        # Whatever the id holds (an accent, a space, "@"), one agent per user, never another's.
        return agent_for_ids(self.user_prefix, user_id=user_id)

    # ``reading``: the tool only reads, so a user with no database yet gets none made (``Engram.for_agent``).
    def _sync(self, run_context: RunContext | None, *, reading: bool = False) -> Engram:
        agent = self._agent(run_context)
        return self.engram if agent is None else self.engram.for_agent(agent, origin=ORIGIN, reading=reading)

    def _async(self, run_context: RunContext | None, *, reading: bool = False) -> AsyncEngram:
        assert self.aengram is not None  # registered only with one
        agent = self._agent(run_context)
        return self.aengram if agent is None else self.aengram.for_agent(agent, origin=ORIGIN, reading=reading)

    # --- the tools (docstrings and parameters are what the model is shown) ----------------------
    def remember(self, content: str, key: str | None = None, tags: list[str] | None = None,
                 category: str = "knowledge", type: str | None = None,  # noqa: A002
                 importance: float = 0.5, run_context: RunContext | None = None) -> str:
        mem = self._sync(run_context)
        with _for_the_model():
            result = mem.remember(content, key=key, tags=tags, category=category, type=type, importance=importance)
        return _remembered(result)

    def recall(self, query: str, limit: int | None = None, min_relevance: float | None = None,
               tags: list[str] | None = None, run_context: RunContext | None = None) -> str:
        mem = self._sync(run_context, reading=True)
        with _for_the_model():
            result = mem.recall(query, limit=limit, min_relevance=min_relevance,
                                filters=None if tags is None else Filters(tags=tags))
        return _recalled(result)

    def forget(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
               tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
               dry_run: bool = False, run_context: RunContext | None = None) -> str:
        mem = self._sync(run_context)
        with _for_the_model():
            return _json(tool_calls.forget(mem, memory_id, key, query, tag, older_than_days, reason, dry_run))

    def versions(self, memory_id: str | None = None, key: str | None = None,
                 run_context: RunContext | None = None) -> str:
        mem = self._sync(run_context, reading=True)
        with _for_the_model():
            return _json(tool_calls.versions(mem, memory_id, key))

    # --- the same, awaited (``agent.arun``); shown the model the same docstrings (below) -------
    async def aremember(self, content: str, key: str | None = None, tags: list[str] | None = None,
                        category: str = "knowledge", type: str | None = None,  # noqa: A002
                        importance: float = 0.5, run_context: RunContext | None = None) -> str:
        mem = self._async(run_context)
        with _for_the_model():
            result = await mem.remember(content, key=key, tags=tags, category=category, type=type,
                                        importance=importance)
        return _remembered(result)

    async def arecall(self, query: str, limit: int | None = None, min_relevance: float | None = None,
                      tags: list[str] | None = None, run_context: RunContext | None = None) -> str:
        mem = self._async(run_context, reading=True)
        with _for_the_model():
            result = await mem.recall(query, limit=limit, min_relevance=min_relevance,
                                      filters=None if tags is None else Filters(tags=tags))
        return _recalled(result)

    async def aforget(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
                      tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
                      dry_run: bool = False, run_context: RunContext | None = None) -> str:
        mem = self._async(run_context)
        with _for_the_model():
            return _json(await tool_calls.aforget(mem, memory_id, key, query, tag, older_than_days, reason, dry_run))

    async def aversions(self, memory_id: str | None = None, key: str | None = None,
                        run_context: RunContext | None = None) -> str:
        mem = self._async(run_context, reading=True)
        with _for_the_model():
            return _json(await tool_calls.aversions(mem, memory_id, key))

    # What the model is shown, one text for both variants (and for Pydantic AI's toolset).
    remember.__doc__ = aremember.__doc__ = tool_docs.REMEMBER
    recall.__doc__ = arecall.__doc__ = tool_docs.RECALL
    forget.__doc__ = aforget.__doc__ = tool_docs.FORGET
    versions.__doc__ = aversions.__doc__ = tool_docs.VERSIONS
