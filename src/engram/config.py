"""Settings, read in one place: explicit arguments > environment > config file > defaults.

Environment variables are ``ENGRAM_<NAME>``, nested with ``__`` (``ENGRAM_RECALL__TEXT_WEIGHT``).
The config file is TOML at ``$ENGRAM_CONFIG`` or ``$ENGRAM_HOME/config.toml``; keys mirror the
field names (``backend = "sqlite"``, ``[recall]`` ``text_weight = 0.5``). Only ``Engram.from_settings``
and the interfaces' start-up call ``load_settings``; everything else receives values.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from engram.agent.settings import ChatSettings
from engram.db.pg_settings import PostgresSettings
from engram.embed.settings import EmbeddingSettings
from engram.errors import ConfigError
from engram.files.settings import FilesSettings
from engram.history.settings import HistorySettings
from engram.interfaces.settings import ServerSettings
from engram.lifecycle.settings import LifecycleSettings
from engram.llm.settings import LLMSettings
from engram.privacy import PrivacySettings
from engram.store.index_settings import FullTextSettings, VectorIndexSettings
from engram.temporal.settings import TimeSettings


def default_home() -> Path:
    return Path(os.environ.get("ENGRAM_HOME") or Path.home() / ".engram").expanduser()


class RecallSettings(BaseModel):
    """How recall ranks: weighted fusion of text and vector scores (PtrClaw), or RRF."""

    limit: int = Field(10, ge=1, le=1000)
    fusion: Literal["weighted", "rrf"] = "weighted"
    text_weight: float = Field(0.5, ge=0.0, le=1.0)
    vector_weight: float = Field(0.5, ge=0.0, le=1.0)
    rrf_k: int = Field(60, ge=1)
    # Recency multiplier exp(-ln2 * age / half_life), applied after fusion; 0 disables it.
    recency_half_life_s: float = Field(0.0, ge=0.0)
    # Importance multiplier (1 - w) + w * importance; 0 disables it.
    importance_weight: float = Field(0.0, ge=0.0, le=1.0)
    min_relevance: float = Field(0.0, ge=0.0, le=1.0)
    # A memory found only by its vector (no word in common) needs at least this cosine similarity:
    # every memory has *some* cosine to any query, and returning those is padding, not recall.
    min_similarity: float = Field(0.2, ge=-1.0, le=1.0)
    # Share of a hit's score given to a neighbour reached through a link (depth expansion).
    link_factor: float = Field(0.5, ge=0.0, le=1.0)
    # Maximal marginal relevance: None keeps pure relevance order.
    mmr_lambda: float | None = Field(None, ge=0.0, le=1.0)
    # Identical recalls within this many seconds reuse the result until anything is written; 0 disables.
    cache_ttl_s: float = Field(300.0, ge=0.0)
    # Recall updates last_accessed and recall_count of what it returns.
    touch_on_recall: bool = True


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_", env_nested_delimiter="__", extra="ignore", validate_default=True
    )

    home: Path = Field(default_factory=default_home)
    backend: str = "sqlite"
    # File of the sqlite/jsonfile backends; empty means ``home/memory.db`` or ``home/memory.json``.
    path: Path | None = None
    # One database per agent under ``home/agents/<agent>/`` instead of one shared file.
    per_agent_databases: bool = False
    agent: str = "default"
    session: str | None = None
    max_content_chars: int = Field(8000, ge=1, le=1_000_000)
    busy_timeout_ms: int = Field(30_000, ge=0)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    files: FilesSettings = Field(default_factory=FilesSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)
    lifecycle: LifecycleSettings = Field(default_factory=LifecycleSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    # A postgresql:// URL selects the shared PostgreSQL backend (see db/postgres.py).
    database_url: str | None = None
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    vector_index: VectorIndexSettings = Field(default_factory=VectorIndexSettings)
    full_text: FullTextSettings = Field(default_factory=FullTextSettings)
    time: TimeSettings = Field(default_factory=TimeSettings)

    @field_validator("home", "path", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return None if value is None else value.expanduser()

    @model_validator(mode="after")
    def _backend_from_url(self) -> Settings:
        # ENGRAM_DATABASE_URL=postgresql://... alone is enough to switch to PostgreSQL.
        if self.database_url and self.database_url.split(":", 1)[0].lower() in ("postgresql", "postgres"):
            if self.backend == "sqlite":
                self.backend = "postgres"
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_path()))

    def database_path(self, agent: str | None = None) -> Path:
        """Where the file backends keep their data for ``agent`` (shared file unless per-agent)."""
        suffix = "json" if self.backend == "jsonfile" else "db"
        if self.path is not None and not self.per_agent_databases:
            return self.path
        if self.per_agent_databases:
            return self.home / "agents" / (agent or self.agent) / f"memory.{suffix}"
        return self.home / f"memory.{suffix}"


def config_path() -> Path:
    """The config file: ``$ENGRAM_CONFIG`` or ``$ENGRAM_HOME/config.toml`` (may not exist)."""
    explicit = os.environ.get("ENGRAM_CONFIG")
    return Path(explicit).expanduser() if explicit else default_home() / "config.toml"


def load_settings(**overrides: Any) -> Settings:
    """Read settings; raises ``ConfigError`` naming the setting at fault."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings ({problems})") from None
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML
        raise ConfigError(f"cannot read config file {config_path()}: {exc}") from None
