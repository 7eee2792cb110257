"""Test support that ships with engram: the store contract suites and deterministic helpers.

A backend (built in or a plug-in) is done when ``MemoryStoreContract`` passes on it unchanged::

    import pytest
    from engram.testing.contracts import MemoryStoreContract

    class TestMyBackend(MemoryStoreContract):
        @pytest.fixture
        def make_store(self, tmp_path):
            return lambda: MyStore(tmp_path / "db")
"""

from engram.testing.fakes import FakeClock, HashingEmbedder

__all__ = ["FakeClock", "HashingEmbedder"]
