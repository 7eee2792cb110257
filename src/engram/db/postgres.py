"""PostgreSQL connections for engram: a psycopg 3 pool, migrations under an advisory lock,
DSN redaction, and the one place driver errors become engram errors.

Many stateless engram processes share one database, so everything here assumes other writers:
migrations take a transaction-scoped advisory lock (the first process migrates, the others wait
and then find nothing pending); writes go through ``transact``, which retries a transaction that
PostgreSQL aborted as a deadlock or serialisation victim. Connections come from a pool
(``psycopg_pool``) sized by settings; no transaction stays open longer than one store call.
"""

from __future__ import annotations

import contextlib
import re
import select
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from urllib.parse import unquote

from engram.db.migrate import Migration, available
from engram.db.pg_settings import PostgresSettings, dsn_problem, url_credentials
from engram.errors import ConfigError, MissingDependencyError, StorageError, ValidationError

try:
    import psycopg
    import psycopg.errors
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("the PostgreSQL backend", "postgres", exc.name or "psycopg") from exc

T = TypeVar("T")

# An arbitrary constant: the advisory lock every engram process takes while migrating.
_MIGRATION_LOCK = 0x656E6772616D  # "engram"
_RETRIES = 5


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and url.split(":", 1)[0].lower() in ("postgresql", "postgres")


# libpq's key=value form: a value quoted ('...', with \' and \\ inside) or not (where a backslash
# escapes the next character, a space included: ``password=a\ b`` is the password "a b").
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|(?:\\.|\S)+)", re.IGNORECASE)
# A URL's query parameter (``?sslmode=require&password=...``): its value runs to the next ``&``.
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)
# A URL quoted in a driver's message (psycopg quotes the whole URI it could not parse).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"']+")
# A password shorter than this is not looked for in a driver's message by its text alone: every
# "e" of the message would be hidden for the password "e" (libpq quotes a password it could not
# parse, "unexpected spaces found in ..."; the URL forms around it are hidden anyway).
_SHORTEST_SOUGHT = 4
# The trigger that derives a memory's full-text columns on every write of its text (schema step 0014).
_FULL_TEXT_TRIGGER = "engram_keep_search_length"


def redact_dsn(dsn: str) -> str:
    """The DSN with any password replaced by ``***`` (URL or ``key=value`` form), for logs and
    errors; the rest as written (a URL Python cannot split, such as an unclosed ``[`` of an IPv6
    host, included: it raised ``ValueError``, an internal error)."""
    if "://" not in dsn:
        return _KV_PASSWORD.sub(r"\1***", dsn)
    credentials = url_credentials(dsn)
    if credentials:
        start, end = credentials
        user, colon, _ = dsn[start:end].partition(":")
        dsn = dsn[:start] + user + (":***" if colon else "") + dsn[end:]
    return _QUERY_PASSWORD.sub(r"\1***", dsn)


def _password_texts(dsn: str) -> list[str]:
    """The passwords ``dsn`` holds as written (and percent-decoded), long enough to be looked for
    in a driver's message (``_SHORTEST_SOUGHT``)."""
    found: list[str] = []
    if "://" in dsn:
        credentials = url_credentials(dsn)
        if credentials and ":" in dsn[credentials[0]:credentials[1]]:
            found.append(dsn[credentials[0]:credentials[1]].partition(":")[2])
        found += [m.group(0).partition("=")[2] for m in _QUERY_PASSWORD.finditer(dsn)]
    else:
        for m in _KV_PASSWORD.finditer(dsn):
            value = m.group(2)
            value = value[1:-1] if value.startswith("'") else value
            found += [value, re.sub(r"\\(.)", r"\1", value)]
    found += [unquote(text) for text in found]
    return sorted({text for text in found if len(text) >= _SHORTEST_SOUGHT}, key=len, reverse=True)


# Connection parameters that change how a connection is made, never which database it reaches.
_NOT_THE_DATABASE = frozenset({
    "password", "passfile", "application_name", "fallback_application_name", "connect_timeout",
    "client_encoding", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
    "tcp_user_timeout", "sslmode", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslpassword",
    "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requiressl", "channel_binding",
    "require_auth", "gssencmode", "gsslib", "gssdelegation", "krbsrvname",
})


def _default_port() -> str:
    """The port libpq connects to when a DSN names none: ``PGPORT`` when set, else its built-in
    5432 (libpq's own defaults, so an omitted port means here what it means to the connection)."""
    for option in psycopg.pq.Conninfo.get_defaults():
        if option.keyword == b"port" and option.val:
            return option.val.decode()
    return "5432"


def database_identity(dsn: str) -> str:
    """The database ``dsn`` reaches, in one spelling and without its password: what names files
    kept for it (``root.database_sidecar``). Parsed by libpq's rules (``conninfo_to_dict``), so
    the spellings of one database agree: ``postgres://`` or ``postgresql://``, URL or
    ``key=value`` form, the port libpq would use (``PGPORT``, else 5432) given or omitted, a trailing ``/`` after the host,
    and parameters that do not choose the database (``sslmode``, ``application_name``,
    ``connect_timeout``, ...). What might reach another database (host, port, dbname, user,
    ``options``, several hosts) is kept as written. A DSN libpq cannot parse is its redacted text."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.Error:
        return redact_dsn(dsn)
    kept = {k: str(v) for k, v in params.items() if k not in _NOT_THE_DATABASE and v not in (None, "")}
    if "," not in kept.get("host", "") + kept.get("hostaddr", ""):  # one server: the port libpq would use
        kept.setdefault("port", _default_port())
    return " ".join(f"{k}={v!r}" for k, v in sorted(kept.items()))


@contextlib.contextmanager
def translate_errors(where: str, secrets: Sequence[str] = ()) -> Iterator[None]:
    """psycopg and pool exceptions become engram's errors, naming the (redacted) database.
    ``secrets``: passwords the driver's messages may quote (``_password_texts``), hidden too."""
    try:
        yield
    except psycopg.errors.UntranslatableCharacter as exc:
        raise ValidationError("content", "contains characters PostgreSQL cannot store", "text without NUL") from exc
    except psycopg.errors.ProgramLimitExceeded as exc:
        # A limit SQLite does not have, reached by what a write holds: a memory's full-text index
        # (a tsvector of key, content and search context) holds at most 1 MB, some 80,000 distinct
        # words, within the 1,000,000 characters max_content_chars allows. The write is refused
        # alone (a batch's others are kept), as a NUL is, rather than as a failure of the database.
        # Known by where it failed: the trigger that first makes a row's tsvector (schema step 0014)
        # is named in the error's context; any other limit is the database's failure, as before.
        if _FULL_TEXT_TRIGGER not in (exc.diag.context or ""):
            raise StorageError(f"PostgreSQL error on {where}: {_message(exc, secrets)}") from exc
        raise ValidationError("content", "holds too many distinct words for PostgreSQL's full-text index, which takes "
                              f"at most 1 MB ({exc.diag.message_primary or exc})",
                              "a text of fewer distinct words (split it into several memories)") from exc
    except PoolTimeout as exc:
        raise StorageError(f"PostgreSQL {where}: no connection available ({exc})") from exc
    except psycopg.OperationalError as exc:
        if _unreachable(exc):
            raise StorageError(f"PostgreSQL {where} is unreachable: {_message(exc, secrets)}") from exc
        raise StorageError(f"PostgreSQL error on {where}: {_message(exc, secrets)}") from exc
    except psycopg.Error as exc:
        raise StorageError(f"PostgreSQL error on {where}: {_message(exc, secrets)}") from exc


def _unreachable(exc: psycopg.OperationalError) -> bool:
    """The server could not be reached or let us in: libpq's own failure (no SQLSTATE), a lost
    connection (class 08), a shutdown or start-up (57P), too many connections. psycopg files
    other server errors under OperationalError too (a program limit, a full disk), which the
    server answered: calling them "unreachable" sent users looking at the network."""
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P")) or state == "53300"


def is_retryable(exc: StorageError) -> bool:
    """True when PostgreSQL aborted the transaction as a deadlock or serialisation victim: running
    it again can succeed."""
    return isinstance(exc.__cause__, psycopg.errors.DeadlockDetected | psycopg.errors.SerializationFailure)


def _message(exc: BaseException, secrets: Sequence[str] = ()) -> str:
    # libpq messages can echo connection parameters, psycopg's the URI or password it could not
    # parse; never let a password through.
    text = _URL.sub(lambda m: redact_dsn(m.group(0)), _KV_PASSWORD.sub(r"\1***", str(exc).strip()))
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


class PgDatabase:
    """A connection pool on one PostgreSQL database, migrated on open (see module docstring)."""

    def __init__(self, pool: ConnectionPool, dsn: str, settings: PostgresSettings | None = None) -> None:
        self.pool = pool
        self.where = redact_dsn(dsn)
        self._dsn = dsn
        self._connect_timeout = max(1, int((settings or PostgresSettings()).timeout_s))
        # The connection of the transaction this thread is inside (``transact``), if any: reads
        # and transactions started within it join it, so a batch of writes is one transaction.
        self._current = threading.local()
        # Set when a connection of the pool was found dead (the server restarted or went away);
        # cleared when the pool hands out a live one again (``_connection``).
        self._lost = threading.Event()
        # Connections opened beside the pool while it has none to give (``_connection``), at most
        # its size: under load every pooled one is busy, and uncapped each request would open its
        # own, past ``pool_max_size`` up to the server's ``max_connections`` ("too many clients").
        self._direct = threading.BoundedSemaphore(max(1, pool.max_size))

    @classmethod
    def connect(cls, dsn: str, settings: PostgresSettings | None = None) -> PgDatabase:
        """Migrate the database, then open a pool on it.

        Raises ConfigError for a DSN that is not a PostgreSQL URL/conninfo, StorageError when the
        server cannot be reached or the schema cannot be applied.
        """
        settings = settings or PostgresSettings()
        where = redact_dsn(dsn)
        problem = dsn_problem(dsn) if "://" in dsn else None
        if problem:
            raise ConfigError(f"database_url {where}: {problem}")
        with translate_errors(where, _password_texts(dsn)):
            with psycopg.connect(dsn, connect_timeout=max(1, int(settings.timeout_s))) as conn:
                migrate(conn)
            pool = ConnectionPool(
                dsn,
                min_size=settings.pool_min_size,
                max_size=max(settings.pool_max_size, settings.pool_min_size, 1),
                timeout=settings.timeout_s,
                configure=register_vector,
                open=False,
                name="engram",
            )
            pool.open(wait=settings.pool_min_size > 0, timeout=settings.timeout_s)
        return cls(pool, dsn, settings)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A live connection, returned to the pool afterwards (committed, or rolled back on error).

        After PostgreSQL restarts, every idle connection of the pool is dead, and psycopg_pool
        hands them out unchecked: each request failed once per pooled connection until they were
        all used up, and the pool then reopened connections with a backoff doubling from 1 s, so
        a request waited up to ``timeout_s`` and failed although the server was back. So a
        connection the server closed is dropped here before use (no round trip unless its socket
        has something to read: the server's goodbye), and while the pool has none left after such
        a loss, a request connects on its own: at once if the server is back, failing at once
        naming why if it is not, rather than waiting for the pool's next attempt."""
        while True:
            direct = (self._lost.is_set() and not self.pool.get_stats().get("pool_available")
                      and self._direct.acquire(blocking=False))  # else: wait in the pool's queue
            if direct:
                try:
                    conn = psycopg.connect(self._dsn, connect_timeout=self._connect_timeout)
                    if not self.pool.get_stats().get("pool_size"):
                        # The server is back, and the pool has no connection and none coming: it gave
                        # up reconnecting (an outage past its ``reconnect_timeout``), or never needed
                        # one (``pool_min_size = 0``). It grows only when asked (``getconn``): the
                        # next request asks it, or every request would connect on its own from now on.
                        self._lost.clear()
                    with conn:  # closes it: the pool's own reconnection refills the pool
                        register_vector(conn)
                        yield conn
                finally:
                    self._direct.release()
                return
            conn = self.pool.getconn()
            if _alive(conn):
                break
            self._lost.set()
            conn.close()
            self.pool.putconn(conn)  # closed: the pool drops it and opens another
        self._lost.clear()
        try:
            with conn:
                yield conn
        finally:
            if conn.closed:  # lost while in use: the next requests must not wait for the pool
                self._lost.set()
            self.pool.putconn(conn)

    @contextlib.contextmanager
    def read(self, *, statements_alone: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A connection inside one (read) transaction, returned to the pool afterwards; inside
        ``transact`` on this thread, that transaction's connection (it sees its own writes).

        ``statements_alone``: no transaction around the statements (autocommit), for reads that
        need nothing of one: at READ COMMITTED each statement takes its own snapshot anyway, so
        what they read is the same, without the BEGIN and COMMIT round trips (a recall makes
        several such reads). Not for transaction-local settings (``set_config(..., true)``),
        locks or server-side cursors."""
        joined = getattr(self._current, "conn", None)
        if joined is not None:
            with translate_errors(self.where):
                yield joined
            return
        with translate_errors(self.where), self._connection() as conn:
            if not statements_alone:
                yield conn
                return
            conn.autocommit = True  # idle here: set on the client, no round trip
            try:
                yield conn
            finally:
                if not conn.closed:
                    conn.autocommit = False

    def in_transaction(self) -> bool:
        """True inside ``transact`` on this thread: another connection would not see its writes."""
        return getattr(self._current, "conn", None) is not None

    def transact(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``work`` in one transaction, committing on return; retried when PostgreSQL aborts it
        as a deadlock or serialisation victim (``work`` must be safe to run again).

        Called inside another ``transact`` on the same thread, ``work`` runs in a savepoint of
        that transaction (undone alone when it raises) and is not retried here: the outermost
        transaction is what PostgreSQL aborts, so it is the one retried."""
        joined = getattr(self._current, "conn", None)
        if joined is not None:
            with translate_errors(self.where), joined.transaction():
                return work(joined)
        for attempt in range(_RETRIES):
            try:
                # BEGIN here, not at ``work``'s first statement: psycopg makes a ``transaction()``
                # entered on an idle connection a transaction of its own (BEGIN ... COMMIT), so a
                # ``work`` that starts with a joined call (``write_batch``: a savepoint per write)
                # committed each of them apart, and a failure after one left it stored.
                with translate_errors(self.where), self._connection() as conn, conn.transaction():
                    self._current.conn = conn
                    try:
                        return work(conn)
                    finally:
                        self._current.conn = None
            except StorageError as exc:
                if not is_retryable(exc) or attempt == _RETRIES - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self.pool.close()


def _alive(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection of the pool still reaches the server. An idle connection has
    nothing to read unless the server sent something unasked: most often its goodbye before
    closing (a restart, ``pg_terminate_backend``), then EOF; only then is it asked (one round
    trip), since a notice can also arrive unasked."""
    if conn.closed or conn.broken:
        return False
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return False
    if not readable:
        return True
    try:
        ConnectionPool.check_connection(conn)
    except psycopg.Error:
        return False
    return True


def applied(conn: psycopg.Connection[Any]) -> set[int]:
    exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
    if not exists or exists[0] is None:
        return set()
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def pending(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Steps not yet applied (only reads)."""
    done = applied(conn)
    return [m for m in available("postgres") if m.version not in done]


def _ensure_pgvector(conn: psycopg.Connection[Any]) -> None:
    """Create the ``vector`` extension when missing, or say how to: pgvector is not a trusted
    extension, so only a superuser's role may create it, and PostgreSQL's own refusal ("permission
    denied to create extension") did not say that once is enough, nor how."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None:
        return
    try:
        with conn.transaction():  # a savepoint: the refusal is reported, not left to abort the rest
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        database = conn.info.dbname
        raise StorageError(
            f"the pgvector extension is not installed in database {database!r} and this role may not create it"
            f" ({_message(exc).splitlines()[0]}): create it once as a superuser"
            f" (psql -d {database} -c 'CREATE EXTENSION IF NOT EXISTS vector'), then start engram again") from exc


def migrate(conn: psycopg.Connection[Any]) -> list[Migration]:
    """Apply every pending step in one transaction under an advisory lock, so that several
    processes starting at once migrate exactly once."""
    ran: list[Migration] = []
    todo = pending(conn)
    conn.rollback()  # the lock below must be taken by the outermost transaction
    if not todo:
        return ran
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        _ensure_pgvector(conn)
        # The steps are sent as UTF-8 (some hold letters: 0012), whatever the connection's encoding.
        conn.execute("SET LOCAL client_encoding = 'UTF8'")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        for step in available("postgres"):
            if step.version in done:
                continue
            conn.execute(step.sql.encode("utf-8"))  # no parameters: several statements in one call
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (step.version, step.name, time.time()),
            )
            ran.append(step)
    return ran
