"""create_embedder: provider selection, auto-detection, env fallbacks, settings validation."""

from __future__ import annotations

import pydantic
import pytest

from engram.embed import EmbeddingIdentity, EmbeddingSettings, auto_fallback_note, create_embedder, detect_provider
from engram.embed import local as local_mod
from engram.errors import ConfigError, MissingDependencyError, ValidationError
from engram.testing.provider_servers import ProviderServer

from .conftest import API_KEY


@pytest.fixture
def no_local(monkeypatch):
    """Behave as if no local runtime were installed (what a core-only install sees)."""
    monkeypatch.setattr(local_mod, "missing_packages", lambda runtime: ["onnxruntime"])


@pytest.mark.parametrize("provider", ["none", "", "NONE"])
def test_none_means_no_embedder(provider):
    assert create_embedder(EmbeddingSettings(provider=provider)) is None


def test_default_is_local(local_embedder):
    emb = create_embedder(EmbeddingSettings(), env={})
    assert emb is not None and emb.identity.provider == "local" and emb.identity.dims == 384


def test_auto_prefers_local_when_installed(local_embedder):
    emb = create_embedder(EmbeddingSettings(provider="auto"), env={"OPENAI_API_KEY": "sk-x"})
    assert emb is not None and emb.identity.provider == "local"


def test_auto_never_picks_a_remote_provider_on_its_own(no_local, server):
    # keys for both remote providers in the environment: the default still keeps memories local
    env = {"OPENAI_API_KEY": API_KEY, "OPENAI_BASE_URL": server.url + "/v1", "GOOGLE_API_KEY": API_KEY}
    assert create_embedder(EmbeddingSettings(provider="auto"), env=env) is None
    assert create_embedder(EmbeddingSettings(), env=env) is None  # auto is the default
    assert detect_provider(EmbeddingSettings(), env=env) is None
    assert server.requests == []


def test_auto_without_a_local_model_notes_the_extra(no_local):
    embedder = create_embedder(EmbeddingSettings(), env={})
    note = auto_fallback_note(EmbeddingSettings(), embedder)
    assert embedder is None and note is not None and "pip install 'engram-recall[local]'" in note
    assert auto_fallback_note(EmbeddingSettings(provider="none"), None) is None  # off on purpose: no note


def test_local_without_its_packages_names_the_extra(no_local):
    with pytest.raises(MissingDependencyError, match=r"pip install 'engram-recall\[local\]'"):
        create_embedder(EmbeddingSettings(provider="local"), env={})


def test_ollama_host_env_and_settings_key_win_over_env(server, tmp_path):
    host = server.url.removeprefix("http://")
    emb = create_embedder(
        EmbeddingSettings(provider="ollama"), cache_path=tmp_path / "c.db", env={"OLLAMA_HOST": host}
    )
    emb.embed(["x"])
    emb.embed(["x"])
    assert len(server.requests) == 1 and (tmp_path / "c.db").exists()
    emb = create_embedder(
        EmbeddingSettings(provider="openai", api_key=API_KEY, base_url=server.url + "/v1", cache=False),
        env={"OPENAI_API_KEY": "sk-from-env"},
    )
    emb.embed(["x"])
    assert emb.cache is None and server.requests[-1].headers["authorization"] == f"Bearer {API_KEY}"


def test_settings_hide_the_key_and_refuse_bad_values():
    s = EmbeddingSettings(provider="openai", api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(s) and "sk-very-secret" not in str(s.model_dump())
    with pytest.raises(pydantic.ValidationError):
        EmbeddingSettings(provider="cohere")
    with pytest.raises(pydantic.ValidationError):
        EmbeddingSettings(batch_size=0)


def test_dims_that_the_model_cannot_make_is_a_config_error(local_embedder):
    with pytest.raises(ConfigError, match="384"):
        create_embedder(EmbeddingSettings(provider="local", dims=512), env={})


def test_openai_without_key_is_a_config_error():
    pytest.importorskip("httpx")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        create_embedder(EmbeddingSettings(provider="openai"), env={})


DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "gemini": "https://generativelanguage.googleapis.com"}


@pytest.mark.parametrize("name", sorted(DEFAULT_URLS))
def test_a_paid_embedding_provider_needs_a_key_at_its_own_address_only(name, tmp_path):
    """The chat providers' rule (llm.api_key): refused without a key at the service's own address,
    left out or spelled out, naming the setting and the variables; at a server of one's own (an
    OpenAI-compatible local one) no key is needed, and none is sent. The openai embedding provider
    refused every keyless server."""
    pytest.importorskip("httpx")
    for base_url in (None, DEFAULT_URLS[name], DEFAULT_URLS[name] + "/"):
        with pytest.raises(ConfigError) as refused:
            create_embedder(EmbeddingSettings(provider=name, base_url=base_url), env={})
        message = str(refused.value)
        assert "embeddings.api_key" in message and "ENGRAM_EMBEDDINGS__API_KEY" in message
        assert "embeddings.base_url" in message and ("OPENAI_API_KEY" if name == "openai" else "GEMINI_API_KEY") in message
    with ProviderServer(api_key=None) as own:  # a server that asks for no key
        url = own.url + "/v1" if name == "openai" else own.url
        emb = create_embedder(EmbeddingSettings(provider=name, base_url=url, cache=False), env={})
        assert emb is not None and emb.embed(["kept local"]).shape == (1, emb.identity.dims)
        headers = own.requests[0].headers
        assert "authorization" not in headers and "x-goog-api-key" not in headers


def test_identity_round_trip():
    ident = EmbeddingIdentity("ollama", "nomic-embed-text:v1.5", 768)
    assert str(ident) == "ollama:nomic-embed-text:v1.5:768"
    assert EmbeddingIdentity.parse(str(ident)) == ident
    for bad in ["openai", "openai:model", "openai:model:x", ":m:3"]:
        with pytest.raises(ValidationError):
            EmbeddingIdentity.parse(bad)
