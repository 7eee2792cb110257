"""Embedding settings: which provider, which model, where, and how patiently.

The core's config nests this model as ``embeddings`` (so ``ENGRAM_EMBEDDINGS__PROVIDER`` etc. set
it). The providers' usual variables are honoured as fallbacks only, in :func:`with_env_fallbacks`:
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``, ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, ``OLLAMA_HOST``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import ConfigDict, Field, SecretStr, field_validator

from engram import provider_keys
from engram.embed.cache import DEFAULT_MAX_ENTRIES, MAX_ENTRIES
from engram.settings_section import SettingsSection


class EmbeddingSettings(SettingsSection):
    """How engram embeds text. ``provider="none"`` turns vectors off (recall uses full text)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # auto: the local model when its packages are installed, else full text with a note. It never
    # picks a remote provider on its own: memory content leaves the machine only when asked to.
    provider: str = Field("auto", description="auto | local | openai | gemini | ollama | none")
    model: str | None = Field(None, description="provider's model; None = the provider's default")
    base_url: str | None = Field(None, description="API root; None = the provider's default")
    api_key: SecretStr | None = Field(None, description="API key; falls back to the provider's env var")
    dims: int | None = Field(None, gt=0, description="vector size; None = the model's known size")
    batch_size: int = Field(64, ge=1, le=2048)
    timeout_s: float = Field(30.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    cache: bool = Field(True, description="keep vectors in a persistent cache keyed by model and text")
    # 0 is refused, not taken as "no bound": a cache that grows for ever is what the bound is for,
    # and one that keeps nothing is ``cache = false``. The top is SQLite's largest integer.
    cache_max_entries: int = Field(DEFAULT_MAX_ENTRIES, ge=1, le=MAX_ENTRIES,
                                   description="most vectors the cache file keeps; the least recently used go first")

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        from engram import jsondoc
        from engram.registry import names  # what is registered, plug-ins included

        value = value.strip().lower()
        allowed = [*names("embedding"), "auto", "none"]
        if value not in (*allowed, ""):
            raise ValueError(f"unknown embedding provider {jsondoc.shown(value)}; allowed: {', '.join(allowed)}")
        return value


_URL_VARS = {"openai": ("OPENAI_BASE_URL",), "ollama": ("OLLAMA_HOST",)}


def key_variables(provider: str) -> tuple[str, ...]:
    """The provider's usual variables a key is read from (its missing-key error names them); none: it
    takes no key. The table is ``provider_keys.KEY_VARIABLES``, the chat providers' too."""
    return provider_keys.key_variables(provider)


def env_key_variable(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The provider's usual environment variable its key is taken from, if one is set."""
    return provider_keys.set_variable(key_variables(provider), env)


def env_api_key(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The provider's key from its usual environment variables, if one is set."""
    env = os.environ if env is None else env
    variable = env_key_variable(provider, env)
    return env[variable] if variable is not None else None


def with_env_fallbacks(
    settings: EmbeddingSettings, provider: str, env: Mapping[str, str] | None = None
) -> EmbeddingSettings:
    """A copy of ``settings`` for ``provider`` with an unset key / base URL taken from the env."""
    env = os.environ if env is None else env
    update: dict[str, object] = {}
    if settings.api_key is None:
        key = env_api_key(provider, env)
        if key:
            update["api_key"] = SecretStr(key)
    if settings.base_url is None:
        for var in _URL_VARS.get(provider, ()):
            if env.get(var):
                update["base_url"] = env[var]
                break
    return settings.model_copy(update=update) if update else settings
