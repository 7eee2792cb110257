"""The reference checks use the interface tests' real servers (a SQLite file, uvicorn on a socket)."""

from tests.interfaces.conftest import served  # noqa: F401 - a fixture, shared
