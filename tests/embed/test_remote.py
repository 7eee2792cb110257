"""The remote providers' real clients against a local server speaking their wire formats."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("httpx")  # the remote providers' client (extra llm)

from engram.embed import Embedder, EmbeddingIdentity
from engram.embed.gemini import GeminiProvider
from engram.embed.ollama import OllamaProvider, normalise_host
from engram.embed.openai import OpenAIProvider
from engram.errors import ConfigError, DimensionError, EmbeddingError
from engram.testing.provider_servers import Fault, bag_of_words_vector

from .conftest import API_KEY

PROVIDERS = {
    "openai": (lambda url, **kw: OpenAIProvider(base_url=url + "/v1", api_key=API_KEY, **kw), 1536),
    "gemini": (lambda url, **kw: GeminiProvider(base_url=url, api_key=API_KEY, **kw), 768),
    "ollama": (lambda url, **kw: OllamaProvider(base_url=url, **kw), 768),
}


@pytest.fixture(params=sorted(PROVIDERS))
def make(request, server, sleeps):
    name = request.param
    factory, dims = PROVIDERS[name]

    def build(batch_size: int = 64, max_retries: int = 3, **kw) -> Embedder:
        return Embedder(
            factory(server.url, **kw), batch_size=batch_size, max_retries=max_retries, sleep=sleeps
        )

    build.name, build.dims = name, dims
    return build


def test_success_returns_unit_float32_rows_in_order(make, server):
    emb = make()
    texts = ["Caroline adopted a rescue greyhound", "the stock market fell", "Melanie paints sunsets"]
    out = emb.embed(texts)
    assert emb.identity == EmbeddingIdentity(make.name, emb.identity.model, make.dims)
    assert out.dtype == np.float32 and out.shape == (3, make.dims)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    for row, text in zip(out, texts, strict=True):  # order kept (OpenAI's answer comes reversed)
        assert np.allclose(row, bag_of_words_vector(text, make.dims), atol=1e-5)
    assert len(server.requests) == 1 and server.requests[0].provider == make.name
    q = emb.embed_query("the market fell")
    assert q.shape == (make.dims,) and float(q @ out[1]) > float(q @ out[0])


def test_batching_splits_requests(make, server):
    emb = make(batch_size=4)
    texts = [f"sentence number {i}" for i in range(10)]
    seen = []
    out = emb.embed(texts, progress=lambda done, total: seen.append((done, total)))
    assert out.shape == (10, make.dims)
    assert len(server.requests) == 3
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_retry_then_success_honours_retry_after(make, server, sleeps):
    server.fail(Fault(429, retry_after="2"), Fault(503))
    out = make().embed(["hello world"])
    assert out.shape == (1, make.dims)
    assert [r.status for r in server.requests] == [429, 503, 200]
    assert len(sleeps.calls) == 2
    assert sleeps.calls[0] >= 2.0  # the server's Retry-After wins over a shorter backoff


def test_retry_after_beyond_patience_fails_at_once(make, server, sleeps):
    server.fail(Fault(429, retry_after="86400", message="daily quota exceeded"))
    with pytest.raises(EmbeddingError, match="asked to wait 86400s.*daily quota"):
        make().embed(["hello"])
    assert len(server.requests) == 1 and sleeps.calls == []


def test_retries_exhausted_raise_with_context(make, server, sleeps):
    server.fail(*[Fault(500, message="upstream exploded")] * 3)
    with pytest.raises(EmbeddingError) as info:
        make(max_retries=2).embed(["hello"])
    message = str(info.value)
    assert make.name in message and "500" in message and "upstream exploded" in message
    assert len(server.requests) == 3 and len(sleeps.calls) == 2
    assert sleeps.calls[1] > sleeps.calls[0] * 0.9  # exponential: grows (within jitter)


def test_client_error_is_not_retried(make, server, sleeps):
    server.fail(Fault(400, message="input too long"))
    with pytest.raises(EmbeddingError, match="input too long"):
        make().embed(["hello"])
    assert len(server.requests) == 1 and sleeps.calls == []


def test_wrong_dimension_is_refused(make, server):
    server.fail(Fault(kind="wrong_dims"))
    with pytest.raises(DimensionError) as info:
        make().embed(["hello"])
    assert info.value.field == "embedding" and str(make.dims) in str(info.value)


def test_malformed_json_is_an_embedding_error(make, server, sleeps):
    server.fail(Fault(kind="malformed"))
    with pytest.raises(EmbeddingError, match="not JSON"):
        make().embed(["hello"])


def test_timeout_is_retried(make, server, sleeps):
    server.fail(Fault(kind="sleep", delay_s=1.0))
    out = make(timeout_s=0.2).embed(["hello"])
    assert out.shape == (1, make.dims) and len(sleeps.calls) == 1


@pytest.mark.parametrize("name", ["openai", "gemini"])
def test_wrong_key_is_401_without_retry(name, server, sleeps):
    provider = (
        OpenAIProvider(base_url=server.url + "/v1", api_key="sk-wrong")
        if name == "openai"
        else GeminiProvider(base_url=server.url, api_key="wrong")
    )
    with pytest.raises(EmbeddingError) as info:
        Embedder(provider, sleep=sleeps).embed(["hello"])
    assert "401" in str(info.value) and "Incorrect API key" in str(info.value)
    assert "sk-wrong" not in str(info.value)
    assert len(server.requests) == 1 and sleeps.calls == []


def test_key_travels_in_a_header_never_the_url(server):
    Embedder(GeminiProvider(base_url=server.url, api_key=API_KEY)).embed(["hi"])
    Embedder(OpenAIProvider(base_url=server.url + "/v1", api_key=API_KEY)).embed(["hi"])
    gem, oai = server.requests
    assert API_KEY not in gem.path and gem.headers["x-goog-api-key"] == API_KEY
    assert oai.headers["authorization"] == f"Bearer {API_KEY}"


def test_reduced_dimensions_are_requested(server):
    emb = Embedder(OpenAIProvider(base_url=server.url + "/v1", api_key=API_KEY, dims=256))
    assert emb.embed(["hi"]).shape == (1, 256)
    assert server.requests[0].body["dimensions"] == 256
    assert str(emb.identity) == "openai:text-embedding-3-small:256"


def test_unknown_model_without_dims_and_missing_key_are_config_errors(server):
    with pytest.raises(ConfigError, match="dims"):
        OllamaProvider(model="my-custom-embedder", base_url=server.url)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIProvider()  # at the service's own address; a server of one's own may need no key


def test_connection_refused_is_retried_then_fails(sleeps):
    emb = Embedder(OllamaProvider(base_url="http://127.0.0.1:9"), max_retries=1, sleep=sleeps)
    with pytest.raises(EmbeddingError, match="gave up after 2 attempts"):
        emb.embed(["hello"])


def test_connection_refused_without_retries_says_one_attempt(sleeps):
    emb = Embedder(OllamaProvider(base_url="http://127.0.0.1:9"), max_retries=0, sleep=sleeps)
    with pytest.raises(EmbeddingError, match="gave up after 1 attempt: "):
        emb.embed(["hello"])


def test_ollama_host_forms():
    assert normalise_host("0.0.0.0") == "http://0.0.0.0:11434"
    assert normalise_host("example.com:1234") == "http://example.com:1234"
    assert normalise_host("https://ollama.example.com/") == "https://ollama.example.com:443"
    assert normalise_host("http://localhost:11434") == "http://localhost:11434"
