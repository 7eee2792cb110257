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
from engram.store.sqlite import SqliteMemoryStore  # noqa: E402


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
    assert all(m.recall_count == 0 for m in engram.list())  # retrieval is not a use unless touch=True


def test_filters_limit_and_touch(engram: Engram) -> None:
    work = EngramRetriever(engram=engram, k=5, filters=Filters(tags=["work"]))
    assert {d.page_content for d in work.invoke("user")} <= {"The user works at a bakery in Porto",
                                                              "Deploys happen on Thursdays"}
    assert len(EngramRetriever(engram=engram, k=1).invoke("user dog bakery")) == 1
    EngramRetriever(engram=engram, touch=True).invoke("dog")
    assert engram.get(engram.list(Filters(category="core"))[0].id).recall_count == 1
