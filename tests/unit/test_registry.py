"""Built-ins and plug-ins register the same way, and the settings accept whatever is registered
(``register_provider`` used to register a provider the settings validator then refused)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram import Engram, registry
from engram.config import load_settings
from engram.embed import register_provider
from engram.embed.base import EmbeddingIdentity
from engram.errors import ConfigError
from engram.llm import LLMSettings, create_provider


class WordCountProvider:
    """A plug-in embedding provider: two dimensions, enough to prove it is the one used."""

    def __init__(self, **options: Any) -> None:
        self.identity = EmbeddingIdentity("wordcount", options.get("model") or "v1", 2)

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.array([[len(t.split()), 1.0] for t in texts], dtype=np.float32)


class SilentChat:
    name = "silent"

    def __init__(self, model: str, **options: Any) -> None:
        self.model = model

    def close(self) -> None:
        pass


@pytest.fixture
def plugins() -> Iterator[None]:
    saved = {kind: dict(targets) for kind, targets in registry._TARGETS.items()}
    register_provider("wordcount", f"{__name__}:WordCountProvider")
    registry.register("llm", "silent", f"{__name__}:SilentChat")
    yield
    registry._TARGETS.clear()
    registry._TARGETS.update(saved)


def test_a_registered_embedding_provider_is_accepted_and_used(plugins: None, tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "wordcount", "cache": False}) as mem:
        assert str(mem.embedder.identity) == "wordcount:v1:2"
        mem.remember("three words here")
        assert mem.count() == 1


def test_a_registered_llm_provider_is_accepted_and_used(plugins: None) -> None:
    provider = create_provider(LLMSettings(provider="silent", model="m1"))
    assert isinstance(provider, SilentChat) and provider.model == "m1"


def test_unregistered_names_are_refused_naming_the_setting_and_what_exists(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"embeddings\.provider.*allowed: gemini, local, ollama, openai, auto, none"):
        load_settings(home=tmp_path, embeddings={"provider": "wordcount"})
    with pytest.raises(ConfigError, match=r'llm\.provider.*unknown llm provider "silent"'):
        load_settings(home=tmp_path, llm={"provider": "silent"})
    # The memory backend is refused as the settings are read, naming the setting and where it was
    # set (a config file's `backend = "mongo"` said only "unknown memory backend", then only the
    # setting); the history backend is chosen when it opens, and its refusal names the setting.
    with pytest.raises(ConfigError, match=r'^invalid settings \(backend: unknown memory backend "nope" \(allowed: .*sqlite\) '
                                          r'\(from an argument\)\)$'):
        Engram.from_settings(home=tmp_path, backend="nope")
    with Engram.from_settings(home=tmp_path, history={"backend": "nope"}) as mem:  # opened on first use
        with pytest.raises(ConfigError, match=r'^history\.backend: unknown history backend "nope" \(allowed: .*jsonl'):
            mem.history  # noqa: B018


def test_every_setting_refusal_spells_the_value_given_as_json() -> None:
    # Settings refusals said Python's 'nope'; the rest of engram's errors spell values as JSON.
    from engram.embed.local import resolve_runtime
    from engram.errors import MissingDependencyError
    from engram.temporal.reader import TimeReader

    with pytest.raises(ConfigError, match='embeddings.provider: unknown embedding provider "nope"; allowed: '):
        load_settings(embeddings={"provider": "nope"})
    with pytest.raises(ConfigError, match=r'^embeddings\.model: unknown local embedding model "tiny" \(allowed: '):
        resolve_runtime("tiny")
    with pytest.raises(ConfigError, match=r'^time\.zone: unknown time zone "Mars/Olympus" \(an IANA name'):
        TimeReader("Mars/Olympus")
    assert str(MissingDependencyError("the local model", "local", "onnxruntime")).startswith(
        'the local model needs the package "onnxruntime": install it with ')
