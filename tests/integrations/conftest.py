"""Fixtures the adapters' tests share; a test module defining its own of the same name uses that."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.testing.llm_servers import OpenAICompatServer


@pytest.fixture
def engram(isolated_home: Path) -> Iterator[Engram]:
    # The configured SQLite store under the test's own ENGRAM_HOME, as an application's agent.
    mem = Engram.from_settings(agent="assistant", embeddings={"provider": "none"})
    yield mem
    mem.close()


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    """A local server speaking the chat-completions wire format, playing a scripted model."""
    with OpenAICompatServer() as s:
        yield s
