"""Every adapter's constructor answers a call Python would refuse (its engine left out, an argument
too many by position or given twice, a keyword it does not take) with engram's ``ValidationError``
naming the argument and what the constructor takes, never Python's ``TypeError``
(``integrations.checked_call``). CrewAI's tools are checked in ``test_crewai.py`` (their own venv)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engram.aio import AsyncEngram
from engram.compat.mem0 import AsyncMemory, Memory
from engram.engine import Engram
from engram.errors import ValidationError
from engram.integrations import checked_call

ENGINE = "an Engram or AsyncEngram"


def adapter(name: str) -> Any:
    """The adapter module ``engram.integrations.<name>``, the test skipped when its framework is not
    installed (the newest-dependencies pass leaves out frameworks whose newest release engram
    does not support yet): imported when a case runs, so one missing framework skips its cases only."""
    return pytest.importorskip(f"engram.integrations.{name}", exc_type=ImportError)


@pytest.mark.parametrize(("make", "field", "allowed"), [
    (lambda: adapter("strands").EngramTools(), "engram", f"{ENGINE}: EngramTools(mem)"),
    (lambda: adapter("strands_memory").EngramMemoryStore(name="notes"), "engram", f"{ENGINE}: EngramMemoryStore(mem)"),
    (lambda: adapter("langgraph").EngramStore(), "engram", f"{ENGINE}: EngramStore(mem)"),
    (lambda: adapter("langgraph").EngramStore(agent_prefix="user:"), "engram", f"{ENGINE}: EngramStore(mem)"),
    (lambda: adapter("openai_agents").EngramSession("s"), "engram", f"{ENGINE}: EngramSession(session_id, mem)"),
    (lambda: adapter("openai_agents").EngramSession(), "session_id", "the session's id, text: EngramSession(session_id, mem)"),
    (lambda: adapter("pydantic_ai").EngramToolset(), "engram", "an AsyncEngram: EngramToolset(AsyncEngram(mem))"),
    (lambda: adapter("pydantic_ai").EngramMessageStore(), "engram", f"{ENGINE}: EngramMessageStore(mem)"),
    (lambda: adapter("agno").EngramTools(), "engram", f"{ENGINE}: EngramTools(mem)"),
    (lambda: adapter("agno").EngramTools(per_user=True), "engram", f"{ENGINE}: EngramTools(mem)"),
    # Pydantic's fields: LlamaIndex's block said "got NoneType", LangChain's retriever not how to give it.
    (lambda: adapter("langchain").EngramRetriever(k=2), "engram", f"{ENGINE}: EngramRetriever(engram=mem, k=4)"),
    (lambda: adapter("llamaindex").EngramMemoryBlock(), "engram", f"{ENGINE}: EngramMemoryBlock(engram=mem)"),
])
def test_a_constructor_left_without_what_it_needs_says_what_it_takes(make: Callable[[], Any], field: str,
                                                                      allowed: str) -> None:
    # Python's missing-argument TypeError named the argument, never what it takes.
    with pytest.raises(ValidationError) as err:
        make()
    assert (err.value.field, err.value.problem, err.value.allowed) == (field, "is required", allowed), str(err.value)


@pytest.mark.parametrize(("make", "field", "said", "call"), [
    (lambda m: adapter("strands").EngramTools(m, True), "argument 2", "EngramTools takes 1 positional argument (engram), got 2",
     "EngramTools(mem)"),
    (lambda m: adapter("strands_memory").EngramMemoryStore(m, "notes"), "argument 2", "got 2", "EngramMemoryStore(mem)"),
    (lambda m: adapter("langgraph").EngramStore(m, 1), "argument 2", "got 2", "EngramStore(mem)"),
    (lambda m: adapter("openai_agents").EngramSession("s", m, None), "argument 3",
     "EngramSession takes 2 positional arguments (session_id, engram), got 3", "EngramSession(session_id, mem)"),
    (lambda m: adapter("pydantic_ai").EngramToolset(AsyncEngram(m), "memory"), "argument 2", "got 2", "EngramToolset("),
    (lambda m: adapter("pydantic_ai").EngramMessageStore(m, 10), "argument 2", "got 2", "EngramMessageStore(mem)"),
    (lambda m: adapter("agno").EngramTools(m, True), "argument 2", "got 2", "EngramTools(mem)"),
    (lambda m: adapter("autogen").EngramMemory(m, 5), "argument 2", "got 2", "EngramMemory(mem)"),
    (lambda m: adapter("google_adk").EngramMemoryService(m, "engram://"), "argument 2", "got 2", "EngramMemoryService(uri="),
    (lambda m: Memory(m, None), "argument 2", "got 2", "Memory.from_config(config)"),
    (lambda m: AsyncMemory(m, None), "argument 2", "got 2", "AsyncMemory(mem)"),
    # Pydantic models: the engine is a field, given by name.
    (lambda m: adapter("langchain").EngramRetriever(m), "argument 1", "takes its arguments by keyword only",
     "EngramRetriever(engram=mem"),
    (lambda m: adapter("llamaindex").EngramMemoryBlock(m), "argument 1", "takes its arguments by keyword only",
     "EngramMemoryBlock(engram=mem)"),
])
def test_an_argument_too_many_by_position_is_refused_naming_it(engram: Engram, make: Callable[[Engram], Any],
                                                               field: str, said: str, call: str) -> None:
    # Python's TypeError ("takes 2 positional arguments but 3 were given") said neither which nor how.
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field and said in err.value.problem, str(err.value)
    assert err.value.allowed is not None and call in err.value.allowed, str(err.value)


def test_the_rest_by_keyword_are_listed_with_a_positional_too_many(engram: Engram) -> None:
    with pytest.raises(ValidationError) as err:
        adapter("strands_memory").EngramMemoryStore(engram, "notes")
    assert err.value.allowed is not None and "(name, description, max_search_results," in err.value.allowed


@pytest.mark.parametrize(("make", "field"), [
    (lambda m: adapter("openai_agents").EngramSession("s", m, session_id="t"), "session_id"),
    (lambda m: adapter("agno").EngramTools(m, engram=m), "engram"),
    (lambda m: adapter("langgraph").EngramStore(m, engram=m), "engram"),
])
def test_an_argument_given_twice_is_refused_naming_it(engram: Engram, make: Callable[[Engram], Any],
                                                      field: str) -> None:
    # Python's "got multiple values for argument".
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert (err.value.field, err.value.problem) == (field, "is given twice, by position and by keyword")


@pytest.mark.parametrize(("make", "field", "owner", "listed"), [
    # These gathered no unknown keywords, so Python's TypeError named the keyword and listed nothing.
    (lambda m: adapter("autogen").EngramMemory(m, limit=5), "limit", "EngramMemory", "k"),
    (lambda m: Memory(config={"path": "x"}), "config", "Memory", "extractor"),  # mem0's Memory(config=...)
    (lambda m: AsyncMemory(m, extract=None), "extract", "AsyncMemory", "extractor"),
])
def test_a_keyword_a_constructor_does_not_take_is_refused_naming_it(engram: Engram, make: Callable[[Engram], Any],
                                                                    field: str, owner: str, listed: str) -> None:
    with pytest.raises(ValidationError) as err:
        make(engram)
    assert err.value.field == field and err.value.problem == f"is not a keyword of {owner}", str(err.value)
    assert err.value.allowed is not None and listed in err.value.allowed.split(", ")


def test_the_constructors_still_take_what_they_took(engram: Engram) -> None:
    # By position and by keyword, as before: the check stands in front of the constructor, not in its way.
    assert adapter("openai_agents").EngramSession(session_id="s", engram=engram).session_id == "s"
    assert adapter("langchain").EngramRetriever(engram=AsyncEngram(engram), k=2).engram is engram
    assert adapter("llamaindex").EngramMemoryBlock(engram=engram, k=3).k == 3
    assert adapter("strands_memory").EngramMemoryStore(engram, name="notes").name == "notes"
    assert adapter("autogen").EngramMemory(engram, k=3).k == 3
    assert Memory(engram).engram is engram


def test_a_factory_function_is_checked_as_a_constructor_is(engram: Engram) -> None:
    # CrewAI's engram_tools (a function) answered engram_tools() with Python's TypeError; the
    # decorator served only an __init__ (its first argument taken for self). Here in the main venv,
    # so the function door is checked without CrewAI; test_crewai.py checks engram_tools itself.
    @checked_call("{owner}(mem)")
    def make_tools(engram: Engram, *, k: int = 3) -> tuple[Engram, int]:
        return engram, k

    with pytest.raises(ValidationError) as err:
        make_tools()  # type: ignore[call-arg]
    assert (err.value.field, err.value.problem, err.value.allowed) == ("engram", "is required", f"{ENGINE}: make_tools(mem)")
    with pytest.raises(ValidationError) as err:
        make_tools(engram, 5)  # type: ignore[misc]
    assert (err.value.field, err.value.problem) == ("argument 2", "make_tools takes 1 positional argument (engram), got 2")
    with pytest.raises(ValidationError) as err:
        make_tools(engram, top_k=5)  # type: ignore[call-arg]
    assert (err.value.field, err.value.problem) == ("top_k", "is not a keyword of make_tools")
    assert make_tools(engram, k=5) == (engram, 5) and make_tools(engram=engram) == (engram, 3)  # its result comes back
