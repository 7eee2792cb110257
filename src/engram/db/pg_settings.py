"""Settings of the PostgreSQL backend, kept apart from ``db/postgres.py`` so that reading
settings never imports psycopg (an optional extra)."""

from __future__ import annotations

import re

from pydantic import Field

from engram.settings_section import SettingsSection


class PostgresSettings(SettingsSection):
    """Connection pool of the PostgreSQL backend (the DSN itself is ``database_url``)."""

    pool_min_size: int = Field(1, ge=0)
    pool_max_size: int = Field(10, ge=1)
    # How long a call waits for a free connection (and for the server to answer a connect).
    timeout_s: float = Field(30.0, gt=0)
    # pgvector's hnsw.ef_search for a vector query (at least twice the rows asked for): 200 keeps
    # ~96% of the exact top 10 at 1M hashed vectors where 100 kept 90% (bench/scale.py).
    hnsw_ef_search: int = Field(200, ge=10, le=1000)


# What a PostgreSQL database may be named by, for the errors refusing anything else.
DSN_ALLOWED = "postgresql://user:password@host:port/database, or libpq's key=value form"


def url_credentials(url: str) -> tuple[int, int] | None:
    """Where a ``scheme://`` URL's user name and password (``user:password``) are in ``url``, as
    (start, end) before its ``@``, or None when it holds none. libpq reads them up to the first
    ``@`` before any ``/``, so a password may hold ``?`` and ``#`` (which Python's ``urlsplit``
    reads as the end of the host); a ``/`` or an ``@`` left in a password unescaped is taken up to
    the last ``@`` before the host, so all of what its writer meant as the password is found."""
    start = url.find("://") + 3
    if start < 3:
        return None
    rest = url[start:]
    head = rest.split("/", 1)[0]
    end = head.rfind("@") if "@" in head else rest.split("?", 1)[0].rfind("@")
    return None if end < 0 else (start, start + end)


def credentials_problem(url: str) -> str | None:
    """Why the user name or password of a PostgreSQL ``url`` would be misread, None when it would not:
    libpq ends the password at its first ``@`` and reads the rest as the host name, showing that
    part of the password in its error ("failed to resolve host '...'")."""
    credentials = url_credentials(url)
    if credentials and "@" in url[credentials[0]:credentials[1]]:
        return 'its user name or password holds an "@", which a URL writes as %40'
    return None


def dsn_problem(value: str) -> str | None:
    """Why ``value`` names no PostgreSQL database (a URL of another scheme, a file path), None when
    it names one: a ``postgresql://`` or ``postgres://`` URL, or libpq's ``key=value`` form
    (``host=db dbname=engram``). The value is not repeated: it may hold a password."""
    if "://" in value:
        scheme = value.split("://", 1)[0]
        if scheme.lower() not in ("postgresql", "postgres"):
            named = f'a "{scheme}" URL' if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme) else "this URL"
            return f"{named} is not a PostgreSQL database"
        return credentials_problem(value)
    elif "=" not in value:
        return "not a PostgreSQL URL"
    return None
