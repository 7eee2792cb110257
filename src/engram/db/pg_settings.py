"""Settings of the PostgreSQL backend, kept apart from ``db/postgres.py`` so that reading
settings never imports psycopg (an optional extra)."""

from __future__ import annotations

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
