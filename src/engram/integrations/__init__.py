"""Adapters for agent frameworks, each behind its own extra (``langgraph``, ``langchain``,
``openai-agents``, ``pydantic-ai``, ``llamaindex``, ``agno``, ``google-adk``, ``strands``,
``autogen``, ``crewai``).
Importing one without its extra raises an ``ImportError`` naming the ``pip install`` that fixes it."""

import functools
import hashlib
import inspect
import json
import string
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from engram.about import install_hint
from engram.errors import ValidationError
from engram.model import MAX_MESSAGE_CHARS, make_scope, parse_flag

# What goes before a LangGraph namespace label to name its engram agent (``EngramStore``'s
# ``agent_prefix``), so that a label (a user's id, data) never names one of the application's own
# agents. Here rather than in ``langgraph.py`` so that other doors (the mem0 facade) can keep
# clear of those agents without needing the langgraph extra.
DEFAULT_AGENT_PREFIX = "lg:"


# Ends a history text cut to the message limit; the framework's message itself is kept whole.
CUT_MARK = " [cut here: the whole message is in its metadata]"


def history_text(text: str) -> str:
    """``text`` as the readable text of a history message whose framework message is kept whole
    in its metadata (OpenAI Agents' items, Pydantic AI's messages): cut at the history's limit
    (``MAX_MESSAGE_CHARS``) with ``CUT_MARK``, so a long message (an image's base64 in the item's
    JSON) is stored, not refused; the text is for people and search, the metadata for the framework."""
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[:MAX_MESSAGE_CHARS - len(CUT_MARK)] + CUT_MARK


def missing(extra: str, package: str) -> ImportError:
    return ImportError(f"{package} is not installed: {install_hint(extra)}")


def refuse_unknown(owner: str, given: Iterable[str], allowed: Iterable[str], *, within: str = "") -> None:
    """Refuse a keyword an adapter's constructor does not take, naming it and listing the ones it
    does: a framework's base class that ignores unknown fields (LangChain's, LlamaIndex's) or a
    ``**kwargs`` kept for a framework's registry (ADK's) would otherwise let a mistyped ``top_k``
    leave ``k`` as it was, unsaid. ``within``: the argument holding ``given`` as a dict's keys
    (``session_settings``), named before the key. Raises ``ValidationError`` naming the first
    unknown keyword."""
    allowed = sorted(set(allowed))
    unknown = sorted(set(given) - set(allowed), key=str)
    if unknown:
        raise ValidationError(f"{within}.{unknown[0]}" if within else str(unknown[0]), f"is not a keyword of {owner}",
                              allowed)


def keywords(function: Callable[..., Any]) -> list[str]:
    """The keywords ``function`` takes by name (not ``self``, nor its ``**`` catch-all): what
    ``refuse_unknown`` lists for a constructor that names its own and gathers the rest in ``**unknown``
    to refuse them (Python's own ``TypeError`` names the keyword but not the ones it takes)."""
    return [name for name, parameter in inspect.signature(function).parameters.items()
            if name != "self" and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)]


# What an adapter's ``engram`` argument takes, said when it is missing.
ENGINE = "an Engram or AsyncEngram"

_Checked = TypeVar("_Checked", bound=Callable[..., Any])


def checked_call(usage: str, **takes: str) -> Callable[[_Checked], _Checked]:
    """A decorator for an adapter's ``__init__`` or public factory function (CrewAI's
    ``engram_tools``): what Python would refuse with its own ``TypeError`` (a required argument left
    out, a positional argument too many, one given twice, a keyword it does not take when it gathers
    none in ``**``) is refused as engram's ``ValidationError`` naming the argument and what the call
    takes, before it runs. ``usage`` shows a call (``"{owner}(mem)"``: ``{owner}`` is the class's
    name, a subclass's for one, or the function's); ``takes`` words what each required argument
    takes (``engram``: ``ENGINE`` unless given). Python's ``TypeError`` ("missing 1 required
    positional argument: 'engram'") named the argument but never what it takes, so ``EngramTools()``
    told nothing of the engine it wants. A first parameter named ``self`` marks a method. The
    signature stays the callable's own (``inspect.signature`` follows ``__wrapped__``)."""
    takes = {"engram": ENGINE, **takes}

    def decorate(function: _Checked) -> _Checked:
        parameters = list(inspect.signature(function).parameters.values())
        method = bool(parameters) and parameters[0].name == "self"
        if method:
            parameters = parameters[1:]
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        gathers_args = any(p.kind is p.VAR_POSITIONAL for p in parameters)
        gathers_keywords = any(p.kind is p.VAR_KEYWORD for p in parameters)
        by_keyword = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        required = [p.name for p in parameters
                    if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

        @functools.wraps(function)
        def checked(*all_args: Any, **kwargs: Any) -> Any:
            args = all_args[1:] if method else all_args
            owner = type(all_args[0]).__name__ if method else function.__name__
            call = usage.format(owner=owner)
            if len(args) > len(positional) and not gathers_args:
                if not positional:
                    raise ValidationError("argument 1", f"{owner} takes its arguments by keyword only, got {len(args)} "
                                          "by position", call)
                count = f"{len(positional)} positional argument{'' if len(positional) == 1 else 's'}"
                rest = [name for name in by_keyword if name not in positional]
                raise ValidationError(f"argument {len(positional) + 1}",
                                      f"{owner} takes {count} ({', '.join(positional)}), got {len(args)}",
                                      f"the others by keyword ({', '.join(rest)}): {call}" if rest else call)
            for name in positional[:len(args)]:
                if name in kwargs:
                    raise ValidationError(name, "is given twice, by position and by keyword", call)
            if not gathers_keywords:
                refuse_unknown(owner, kwargs, by_keyword)
            given = {*positional[:len(args)], *kwargs}
            for name in required:
                if name not in given:
                    raise ValidationError(name, "is required", f"{takes[name]}: {call}" if name in takes else call)
            return function(*all_args, **kwargs)

        return cast(_Checked, checked)

    return decorate


def flag_option(field: str, value: Any, none_means: str | None = None) -> bool | None:
    """An adapter's yes/no option (``touch``, ``writable``, ``per_user``) as its constructor takes
    it: True or False, by the rule a per-call ``touch`` follows (``parse_flag``: a pydantic field
    would read "no" as False and 1 as True); None as well when ``none_means`` says what None
    chooses. Raises ``ValidationError`` naming ``field``."""
    if value is None and none_means is not None:
        return None
    try:
        return parse_flag(value, field)
    except ValidationError as exc:
        allowed = "True or False" + (f", or None ({none_means})" if none_means is not None else "")
        raise ValidationError(field, exc.problem, allowed) from None


# An agent name's limit, and how much of a longer one is kept before "@@" and its ids' digest.
_NAME_CHARS = 128
_KEPT_CHARS = _NAME_CHARS - 34
# A prefix stays whole in a cut name (so every agent it names starts with it: listings and sweeps
# over the prefix's agents find them all), with room left for the ids that tell them apart.
MAX_PREFIX_CHARS = 64


def checked_prefix(field: str, value: object, example: str) -> str:
    """``value`` checked as what an adapter puts before a framework's user id or label to name an
    engram agent (LangGraph's ``lg:``, Agno's ``agno:``, ADK's ``adk:``): a string an agent name
    can start with, of at most ``MAX_PREFIX_CHARS``, or "" for none. Raises ``ValidationError``
    naming ``field``."""
    if not isinstance(value, str):
        raise ValidationError(field, f"got {type(value).__name__}", f"a string such as {example!r}, or ''")
    if len(value) > MAX_PREFIX_CHARS:
        # A long id's name is cut (``fitted_name``): the cut must leave the prefix whole.
        raise ValidationError(field, f"is {len(value)} characters long",
                              f"at most {MAX_PREFIX_CHARS} characters, such as {example!r}")
    if value:
        try:
            make_scope(value + "x", None)
        except ValidationError as exc:
            raise ValidationError(field, f"{value!r} cannot start an agent name", exc.allowed) from None
    return value


# Kept as they are when an application's id becomes part of an agent name; every other character
# (":", "@", a space, another script) is written "@" and two hex digits per UTF-8 byte.
_KEPT = frozenset(string.ascii_letters + string.digits + "._-")


def agent_part(text: str) -> str:
    """``text`` as a part of an agent name (``José`` is ``Jos@c3@a9``, ``ana@example.com`` is
    ``ana@40example.com``). "@" never stands for itself, so two texts never give the same part,
    and ":" never appears in one, so parts joined by ":" split one way only."""
    return "".join(ch if ch in _KEPT else "".join(f"@{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
                   for ch in text)


def fitted_name(whole: str, ids: list[str]) -> str:
    """``whole``, an agent name written from ``ids`` (by ``agent_part``), as an agent name's length
    allows: past 128 characters, its first 94 and "@@" (which ``agent_part`` never writes) and 32
    hex digits of the ids' SHA-256, so two cut names differ when their ids do."""
    if len(whole) <= _NAME_CHARS:
        return whole
    digest = hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:32]
    return f"{whole[:_KEPT_CHARS]}@@{digest}"


_PREFIX = 'a string the ids follow, such as "crewai:"'


# Checked as the adapters' calls are: without the prefix Python's TypeError named it but not what it takes.
@checked_call('agent_for_ids(prefix, user_id=..., ...)', prefix=_PREFIX)
def agent_for_ids(prefix: str, **ids: str) -> str:
    """The engram agent an application's ids name under ``prefix``: each id written by
    ``agent_part``, in the order given, joined by ":" (``agent_for_ids("crewai:", user_id="José")``
    is ``crewai:Jos@c3@a9``). Past 128 characters, an agent name's limit, the name is cut and ends
    with "@@" (in no written part) and 32 hex digits of the ids' SHA-256. So different ids never
    share an agent, whatever they hold: a user cannot pick an id that lands on another's memories.
    Google ADK's service and Agno's per-user tools name their users' agents so. Raises
    ``ValidationError`` naming ``prefix`` when it is left out or no string, ``ids`` when none is
    given, an id that is not a non-empty string, or the first id when, with an empty ``prefix``,
    the name would not start with a letter or digit."""
    if not isinstance(prefix, str):
        raise ValidationError("prefix", f"got {type(prefix).__name__}", _PREFIX)
    if not ids:
        # The prefix alone would be every caller's one agent: each user's memories shared with all.
        raise ValidationError("ids", "none given", "one or more ids by keyword, each a non-empty string: "
                              'agent_for_ids("crewai:", user_id=...)')
    for name, value in ids.items():
        if not isinstance(value, str) or not value.strip():
            raise ValidationError(name, f"got {value!r}", "a non-empty string")
    whole = fitted_name(prefix + ":".join(agent_part(value) for value in ids.values()), list(ids.values()))
    try:
        return make_scope(whole, None).agent or whole
    except ValidationError:
        first = next(iter(ids))
        raise ValidationError(first, f"{ids[first]!r} cannot start an agent name",
                              "an id starting with a letter or digit, or a prefix before it") from None
