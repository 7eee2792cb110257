"""EngramRetriever in a real LangChain chain (retriever → prompt → chat model), on a real SQLite store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="the langchain extra is not installed: pip install 'engram-recall[langchain]'")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, RunnablePassthrough  # noqa: E402

from engram.engine import Engram, Filters  # noqa: E402
from engram.integrations.langchain import EngramRetriever  # noqa: E402
from engram.lifecycle import decay  # noqa: E402
from engram.lifecycle.common import DAY  # noqa: E402
from engram.lifecycle.settings import DecaySettings  # noqa: E402
from engram.store.sqlite import SqliteMemoryStore  # noqa: E402
from engram.testing.fakes import FakeClock  # noqa: E402


@pytest.fixture
def engram(tmp_path: Path) -> Engram:
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="assistant")
    mem.remember("The user's dog is called Biscuit", tags=["pets"], category="core")
    mem.remember("The user works at a bakery in Porto", tags=["work"])
    mem.remember("Deploys happen on Thursdays", tags=["work"])
    yield mem
    mem.close()


def test_a_real_chain_answers_from_retrieved_memories(engram: Engram) -> None:
    retriever = EngramRetriever(engram=engram, k=2)
    prompts: list[str] = []

    def record(prompt):  # noqa: ANN001, ANN202 - sees exactly what the model is sent
        prompts.append(prompt.to_string())
        return prompt

    prompt = ChatPromptTemplate.from_messages([("system", "Context:\n{context}"), ("human", "{question}")])
    chain = ({"context": retriever | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs)),
              "question": RunnablePassthrough()}
             | prompt | RunnableLambda(record) | FakeListChatModel(responses=["Biscuit"]) | StrOutputParser())
    assert chain.invoke("what is the dog called?") == "Biscuit"
    assert "The user's dog is called Biscuit" in prompts[0] and "Thursdays" not in prompts[0]

    docs = asyncio.run(retriever.ainvoke("where does the user work"))
    assert docs[0].page_content == "The user works at a bakery in Porto"
    assert docs[0].metadata["key"] and docs[0].metadata["score"] > 0 and docs[0].metadata["tags"] == ["work"]
    # What a chain reads into its context is used: marked as recalled, so the lifecycle jobs keep it.
    counts = {m.content: m.recall_count for m in engram.list()}
    assert counts["The user's dog is called Biscuit"] >= 1 and counts["The user works at a bakery in Porto"] >= 1


def test_filters_limit_and_touch(engram: Engram) -> None:
    work = EngramRetriever(engram=engram, k=5, filters=Filters(tags=["work"]))
    assert {d.page_content for d in work.invoke("user")} <= {"The user works at a bakery in Porto",
                                                              "Deploys happen on Thursdays"}
    assert len(EngramRetriever(engram=engram, k=1).invoke("user dog bakery")) == 1
    counts = {m.id: m.recall_count for m in engram.list()}
    EngramRetriever(engram=engram, touch=False).invoke("dog")  # a look, not a use
    assert {m.id: m.recall_count for m in engram.list()} == counts
    EngramRetriever(engram=engram).invoke("dog")
    dog = engram.list(Filters(category="core"))[0]
    assert engram.get(dog.id).recall_count == counts[dog.id] + 1


def test_search_options_per_call_as_vector_store_retrievers_take_them(engram: Engram) -> None:
    # VectorStoreRetriever reads invoke(query, k=1) as its search_kwargs for that call
    retriever = EngramRetriever(engram=engram, k=3)
    assert len(retriever.invoke("user dog bakery Thursdays")) == 3
    assert len(retriever.invoke("user dog bakery Thursdays", k=1)) == 1
    assert len(asyncio.run(retriever.ainvoke("user dog bakery Thursdays", k=2))) == 2
    assert [d.page_content for d in retriever.invoke("user", filters=Filters(tags=["pets"]))] == [
        "The user's dog is called Biscuit"]
    assert retriever.invoke("user dog bakery", min_relevance=1) == []
    assert len(retriever.invoke("user dog bakery Thursdays", verbose=True)) == 3  # LangChain's own keyword
    counts = {m.id: m.recall_count for m in engram.list()}
    retriever.invoke("dog", k=1, touch=False)
    assert {m.id: m.recall_count for m in engram.list()} == counts
    assert len(retriever.invoke("user dog bakery Thursdays")) == 3  # a call's options do not stay


@pytest.mark.parametrize(("made", "per_call", "field"), [
    ({}, {"k": 0}, "k"), ({}, {"k": 101}, "k"), ({}, {"k": "2"}, "k"), ({}, {"min_relevance": 1.5}, "min_relevance"),
    ({}, {"top_k": 2}, "top_k"), ({}, {"filter": {"tags": ["work"]}}, "filter"), ({}, {"filters": {"tags": []}}, "filters"),
    ({"k": 0}, None, "k"), ({"min_relevance": -1}, None, "min_relevance"),
    ({"top_k": 2}, None, "top_k"), ({}, {"touch": "no"}, "touch"),
])
def test_a_bad_search_option_names_itself(engram: Engram, made: dict, per_call: dict | None, field: str) -> None:
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        EngramRetriever(engram=engram, **made).invoke("dog", **(per_call or {}))
    assert err.value.field == field
    if per_call is not None:
        with pytest.raises(ValidationError) as err:
            asyncio.run(EngramRetriever(engram=engram, **made).ainvoke("dog", **per_call))
        assert err.value.field == field


@pytest.mark.parametrize(("made", "field"), [
    ({"k": "x"}, "k"), ({"k": "5"}, "k"), ({"k": True}, "k"), ({"depth": "x"}, "depth"), ({"depth": "1"}, "depth"),
    ({"depth": 4}, "depth"), ({"min_relevance": "x"}, "min_relevance"), ({"touch": "no"}, "touch"),
    ({"touch": 0}, "touch"), ({"filters": {"tags": ["work"]}}, "filters"), ({"engram": "memory.db"}, "engram"),
])
def test_a_bad_field_is_refused_when_made_as_engram_s_error(engram: Engram, made: dict, field: str) -> None:
    """The constructor refuses as a call does, with engram's ``ValidationError`` (a ``ValueError``)
    naming the field and what is allowed: pydantic refused ``k="x"`` in its own words, and read
    ``k="5"`` as 5, ``touch="no"`` as False and a dict as ``Filters``, where a call refuses each."""
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        EngramRetriever(**{"engram": engram, **made})
    assert err.value.field == field
    assert isinstance(err.value, ValueError) and err.value.allowed


def test_a_retriever_without_an_engram_is_refused_naming_it() -> None:
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        EngramRetriever(k=2)
    assert (err.value.field, err.value.problem) == ("engram", "is required")


def test_touch_made_and_per_call_is_true_false_or_none(engram: Engram) -> None:
    assert EngramRetriever(engram=engram, touch=False).touch is False
    assert EngramRetriever(engram=engram, touch=None).touch is None
    assert EngramRetriever(engram=engram, depth=3, k=2).depth == 3


@pytest.mark.parametrize(("made", "per_call"), [({"k": 0}, None), ({}, {"k": 101})])
def test_a_bad_k_says_what_the_retriever_allows(engram: Engram, made: dict, per_call: dict | None) -> None:
    # The retriever has no offset: its error must not send the caller to page with one.
    from engram.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        EngramRetriever(engram=engram, **made).invoke("dog", **(per_call or {}))
    assert (err.value.field, err.value.allowed) == ("k", "1 to 100")
    assert str(err.value).endswith("(allowed: 1 to 100)") and "offset" not in str(err.value)


def test_what_a_chain_reads_is_kept_by_decay_and_what_it_never_reads_is_not(tmp_path: Path) -> None:
    # Why retrieval is a use: decay removes old low-importance memories nobody recalled, and a
    # memory a chain reads into its context every day is recalled.
    clock = FakeClock()
    mem = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="assistant", clock=clock)
    try:
        read = mem.remember("The user's bike is a green Brompton", importance=0.1).memory
        unread = mem.remember("Deploys happen on Thursdays", importance=0.1).memory
        assert [d.page_content for d in EngramRetriever(engram=mem, k=1).invoke("bike")] == [read.content]
        clock.advance(31 * DAY)
        report = decay.run(mem, DecaySettings(), now=clock())
        assert [m.id for m in report.removed] == [unread.id]
        assert mem.get(read.id).content == read.content
    finally:
        mem.close()


def test_an_async_engram_is_taken_for_its_engine(engram: Engram) -> None:
    # asyncio code holds an AsyncEngram, as the other adapters take it; pydantic refused it.
    from engram.aio import AsyncEngram

    retriever = EngramRetriever(engram=AsyncEngram(engram), k=1)
    assert retriever.engram is engram
    assert [d.page_content for d in asyncio.run(retriever.ainvoke("where does the user work"))] == [
        "The user works at a bakery in Porto"]


def test_a_blank_question_finds_nothing_as_a_vector_store_retriever_answers_it(engram: Engram) -> None:
    # A chain given a blank question (a user who sent only spaces) got engram's "query: must not be
    # empty" from the retriever; LangChain's retrievers answer documents, and engram's other adapters
    # (AutoGen, ADK, LlamaIndex) find nothing for a blank query. A bad option is refused all the same.
    retriever = EngramRetriever(engram=engram, k=2)
    chain = ({"context": retriever | RunnableLambda(lambda docs: len(docs)), "question": RunnablePassthrough()}
             | ChatPromptTemplate.from_template("{context} {question}") | FakeListChatModel(responses=["ok"])
             | StrOutputParser())
    assert chain.invoke("  \n") == "ok"
    assert retriever.invoke("") == [] and asyncio.run(retriever.ainvoke("   ")) == []
    with pytest.raises(ValueError, match="k"):
        retriever.invoke("", k=0)
