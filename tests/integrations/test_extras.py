"""An adapter imported without its extra says which ``pip install`` fixes it."""

from __future__ import annotations

import importlib
import sys

import pytest

from engram.about import install_hint


@pytest.mark.parametrize(("module", "blocked", "extra"), [
    ("engram.integrations.langgraph", "langgraph.store.base", "langgraph"),
    ("engram.integrations.langchain", "langchain_core.retrievers", "langchain"),
    ("engram.integrations.openai_agents", "agents.memory.session", "openai-agents"),
    ("engram.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
    ("engram.integrations.llamaindex", "llama_index.core.memory", "llamaindex"),
    ("engram.integrations.agno", "agno.tools", "agno"),
    ("engram.integrations.google_adk", "google.adk.memory", "google-adk"),
    ("engram.integrations.strands", "strands.tools", "strands"),
    ("engram.integrations.strands_memory", "strands.memory", "strands"),
    ("engram.integrations.autogen", "autogen_core.memory", "autogen"),
    ("engram.integrations.crewai", "crewai.tools", "crewai"),
])
def test_missing_extra_names_the_install(module: str, blocked: str, extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setitem(sys.modules, blocked, None)  # as if the package were not installed
    with pytest.raises(ImportError) as err:
        importlib.import_module(module)
    assert install_hint(extra) in str(err.value) and f"[{extra}]" in str(err.value)
