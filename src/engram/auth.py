"""API tokens: each one acts for exactly one agent; only its SHA-256 is stored.

A token is ``eg_<id>_<secret>``: the id (public, 8 hex characters) names it in ``engram token
list`` and ``revoke``; the secret is 32 random bytes, so a plain SHA-256 is a safe hash (there
is nothing to brute-force, unlike a password). Tokens live in the ``api_tokens`` table of the
SQLite database (migration ``0003_tokens``), next to the memories when the backend is SQLite,
in the shared database when it is PostgreSQL, otherwise in ``auth.db`` in engram's home folder.

The page token of an ``engram serve`` run is a token like the others, named after the process that
made it (``create_run_token``: ``engram serve page (run pid N on HOST)``), so that a later start on
the same host can tell those whose server is gone (killed, or the power cut: nothing revoked them)
and revoke them (``revoke_orphaned_run_tokens``). The name reads true after the run too: ``engram
token list --all`` shows it beside the time it was revoked (it was "engram serve (this run, ...)",
which a revoked token's row still claimed long after that run had ended); tokens named so before
are still recognised.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.db.migrate import migrate
from engram.db.sqlite import Database
from engram.errors import NotFoundError
from engram.model import make_scope

_PREFIX = "eg_"
# How stale a token's ``last_used_at`` may get: a request writes it only when the stored time is
# older than this, so a busy client costs the database a write a minute, not one per request.
LAST_USED_RESOLUTION_S = 60.0
# How long a token ``verify`` accepted is taken as valid without reading its row again
# (``verified_recently``): the HTTP server checks a token on each request, and reading it meant
# taking the database's lock, which waits for any commit in progress. A token revoked through
# this store stops working at once; revoked by another process, within this time.
VERIFIED_RECHECK_S = 1.0
# An ``engram serve`` run's page token, by the process and host that made it (``create_run_token``).
_RUN_NAME = re.compile(r"^engram serve page \(run pid (\d+) on (\S+)\)$")
_EARLIER_RUN_NAME = re.compile(r"^engram serve \(this run(?:, pid (\d+) on (\S+))?\)$")  # as they were named before


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A stored token, without its secret."""

    id: str
    agent: str
    name: str
    created_at: float
    last_used_at: float | None = None
    revoked_at: float | None = None


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


class TokenStore:
    """Create, verify, list and revoke API tokens in one SQLite file.

    The token logic lives here; the five storage methods at the end are what a backend changes
    (``PostgresTokenStore`` below keeps tokens in the shared PostgreSQL database)."""

    def __init__(self, db: Database, *, owns_db: bool = True) -> None:
        """Keep tokens in ``db`` (migrated here); ``owns_db`` closes it with the store."""
        self._keep(db, owns_db)
        migrate(db)

    def _keep(self, db: Any, owns_db: bool) -> None:
        self.db = db
        self._owns_db = owns_db
        self._closers: list[Callable[[], None]] = []
        # Tokens ``verify`` accepted, by hash: their record and when (``clock``), for ``verified_recently``.
        self._verified: dict[str, tuple[TokenInfo, float]] = {}
        self._revocations = 0  # a ``verify`` that overlapped a revocation keeps nothing
        self.clock: Callable[[], float] = time.monotonic

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout_ms: int = 30_000, key: str | None = None) -> TokenStore:
        """Open (and migrate) the token table in the SQLite file at ``path`` (SQLCipher ``key`` when
        encrypted); raises ``StorageError``."""
        return cls(Database(path, busy_timeout_ms=busy_timeout_ms, key=key))

    def create(self, agent: str, name: str = "") -> tuple[str, TokenInfo]:
        """A new token for ``agent``: returns the token (shown once) and its record.

        Raises ``ValidationError`` for an invalid agent name.
        """
        make_scope(agent, None)  # validates the name
        token_id = secrets.token_hex(4)
        token = f"{_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        info = TokenInfo(token_id, agent, name.strip()[:200], time.time())
        self._insert(info, _hash(token))
        return token, info

    def create_run_token(self, agent: str) -> tuple[str, TokenInfo]:
        """A token for this process's ``engram serve`` run (its page), named after the process so a
        later start can tell whether it is gone (``revoke_orphaned_run_tokens``). Raises
        ``ValidationError`` for an invalid agent name."""
        return self.create(agent, name=f"engram serve page (run pid {os.getpid()} on {socket.gethostname()})")

    def revoke_orphaned_run_tokens(self) -> list[str]:
        """Revoke the run tokens of ``engram serve`` processes on this host that are no longer
        running (and those of runs from before run tokens were named by process, whose process
        cannot be told); returns the ids revoked. A token of another host is left alone: whether
        its server runs cannot be seen from here."""
        here = socket.gethostname()
        revoked = []
        for info in self.list():
            found = _RUN_NAME.match(info.name) or _EARLIER_RUN_NAME.match(info.name)
            if found is None:
                continue
            pid, host = found.groups()
            if pid is not None and (host != here or _process_alive(int(pid))):
                continue
            self.revoke(info.id)
            revoked.append(info.id)
        return revoked

    def verify(self, token: str) -> TokenInfo | None:
        """The live token matching ``token``, or None (unknown, malformed or revoked)."""
        if not token.startswith(_PREFIX) or len(token) > 200:
            return None
        digest = _hash(token)
        checked, revocations = self.clock(), self._revocations
        row = self._find(digest)
        if row is None or row[5] is not None or not hmac.compare_digest(row[6], digest):
            self._verified.pop(digest, None)
            return None
        info = TokenInfo(*row[:6])
        now = time.time()
        if info.last_used_at is None or now - info.last_used_at >= LAST_USED_RESOLUTION_S:
            self.mark_used(info.id, now)
        if revocations == self._revocations:
            self._verified[digest] = (info, checked)
        return info

    def verified_recently(self, token: str) -> TokenInfo | None:
        """The record ``verify`` gave ``token`` less than ``VERIFIED_RECHECK_S`` ago, read from
        memory (no database, so an event loop may call it); None means: ask ``verify``."""
        kept = self._verified.get(_hash(token)) if token.startswith(_PREFIX) and len(token) <= 200 else None
        if kept is None or self.clock() - kept[1] >= VERIFIED_RECHECK_S:
            return None
        return kept[0]

    @property
    def revocations(self) -> int:
        """How many revocations this store has made: a check begun before the count moved may have
        read a token since revoked, so its answer is not to be handed to a caller that came after."""
        return self._revocations

    def list(self, agent: str | None = None, *, include_revoked: bool = False) -> list[TokenInfo]:
        return [TokenInfo(*row) for row in self._rows(agent, include_revoked)]

    def has_live_tokens(self) -> bool:
        """Whether any token is not revoked (a server with none serves no agent over HTTP)."""
        return self._any_live()

    def revoke(self, token_id: str) -> tuple[TokenInfo, bool]:
        """Revoke the token with this id (or the full token): the token as stored now, and whether
        this call revoked it (False: it was revoked before, and keeps that time, as linking two
        linked memories changes nothing). Raises ``NotFoundError`` when no token has that id."""
        if token_id.startswith(_PREFIX):
            token_id = token_id[len(_PREFIX):].split("_", 1)[0]
        self._forget_verified(token_id)
        revoked = self._revoke(token_id, time.time())
        self._forget_verified(token_id)  # a verify that read the row before the commit kept nothing
        found = next((t for t in self.list(include_revoked=True) if t.id == token_id), None)
        if found is None:
            raise NotFoundError("token", token_id)
        return found, revoked

    def _forget_verified(self, token_id: str) -> None:
        self._revocations += 1
        self._verified = {digest: kept for digest, kept in self._verified.items() if kept[0].id != token_id}

    def on_close(self, closer: Callable[[], None]) -> None:
        """Run ``closer`` when this store closes (the backend it was taken from)."""
        self._closers.append(closer)

    def close(self) -> None:
        if self._owns_db:
            self.db.close()
        while self._closers:
            self._closers.pop()()

    # --- storage ---------------------------------------------------------------------------
    def _insert(self, info: TokenInfo, digest: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO api_tokens(id, agent, name, token_hash, created_at) VALUES (?, ?, ?, ?, ?)",
                (info.id, info.agent, info.name, digest, info.created_at),
            )

    def _find(self, digest: str) -> tuple[Any, ...] | None:
        with self.db.read() as conn:
            return conn.execute(_FIND.replace("%s", "?"), (digest,)).fetchone()

    def mark_used(self, token_id: str, at: float) -> None:
        with self.db.write() as conn:
            conn.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (at, token_id))

    def _rows(self, agent: str | None, include_revoked: bool) -> list[tuple[Any, ...]]:
        sql, params = _list_sql(agent, include_revoked)
        with self.db.read() as conn:
            return conn.execute(sql.replace("%s", "?"), params).fetchall()

    def _revoke(self, token_id: str, now: float) -> bool:
        with self.db.write() as conn:
            return conn.execute(_REVOKE.replace("%s", "?"), (now, token_id)).rowcount > 0

    def _any_live(self) -> bool:  # (no parameters: the same SQL on every backend)
        with self.db.read() as conn:
            return conn.execute(_ANY_LIVE).fetchone() is not None


_FIND = ("SELECT id, agent, name, created_at, last_used_at, revoked_at, token_hash FROM api_tokens "
         "WHERE token_hash = %s")
_REVOKE = "UPDATE api_tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL"
_ANY_LIVE = "SELECT 1 FROM api_tokens WHERE revoked_at IS NULL LIMIT 1"


def _list_sql(agent: str | None, include_revoked: bool) -> tuple[str, list[str]]:
    sql = "SELECT id, agent, name, created_at, last_used_at, revoked_at FROM api_tokens WHERE 1=1"
    params: list[str] = []
    if agent is not None:
        sql += " AND agent = %s"
        params.append(agent)
    if not include_revoked:
        sql += " AND revoked_at IS NULL"
    return sql + " ORDER BY created_at, id", params


class PostgresTokenStore(TokenStore):
    """API tokens in the shared PostgreSQL database (migration ``postgres/0005_tokens``), so a
    token created through any engram server or CLI works against every server on the database."""

    def __init__(self, db: Any, *, owns_db: bool = True) -> None:  # a migrated ``engram.db.postgres.PgDatabase``
        self._keep(db, owns_db)

    @classmethod
    def connect(cls, dsn: str, settings: Any = None) -> PostgresTokenStore:
        """Connect to (and migrate) the database at ``dsn``; raises ``ConfigError``/``StorageError``."""
        from engram.db.postgres import PgDatabase

        return cls(PgDatabase.connect(dsn, settings))

    def _insert(self, info: TokenInfo, digest: str) -> None:
        self.db.transact(lambda conn: conn.execute(
            "INSERT INTO api_tokens(id, agent, name, token_hash, created_at) VALUES (%s, %s, %s, %s, %s)",
            (info.id, info.agent, info.name, digest, info.created_at),
        ))

    def _find(self, digest: str) -> tuple[Any, ...] | None:
        with self.db.read() as conn:
            return conn.execute(_FIND, (digest,)).fetchone()

    def mark_used(self, token_id: str, at: float) -> None:
        self.db.transact(lambda conn: conn.execute(
            "UPDATE api_tokens SET last_used_at = %s WHERE id = %s", (at, token_id)))

    def _rows(self, agent: str | None, include_revoked: bool) -> list[tuple[Any, ...]]:
        sql, params = _list_sql(agent, include_revoked)
        with self.db.read() as conn:
            return conn.execute(sql, params).fetchall()

    def _revoke(self, token_id: str, now: float) -> bool:
        return bool(self.db.transact(lambda conn: conn.execute(_REVOKE, (now, token_id)).rowcount > 0))
