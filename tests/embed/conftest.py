from __future__ import annotations

import pytest

from engram.embed import Embedder
from engram.testing.provider_servers import ProviderServer

API_KEY = "sk-test-0123456789"


@pytest.fixture(scope="session")
def provider_server():
    pytest.importorskip("httpx")
    with ProviderServer(api_key=API_KEY) as server:
        yield server


@pytest.fixture
def server(provider_server):
    provider_server.reset()
    yield provider_server
    provider_server.reset()


@pytest.fixture(scope="session")
def local_embedder():
    """The real local model, loaded once per test session."""
    from engram.embed.local import LocalProvider, available_runtime

    if available_runtime() is None:
        pytest.skip("no local embedding runtime installed (pip install 'engram-recall[local]')")
    provider = LocalProvider()
    provider.warm_up()
    return Embedder(provider)


class Sleeps:
    """Records the backoff delays the Embedder asked for instead of sleeping them."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()
