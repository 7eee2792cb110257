"""Chat providers behind one contract (``base.ChatProvider``), chosen by name through the registry."""

from __future__ import annotations

import os

from engram.errors import ConfigError
from engram.llm.base import (
    ChatProvider,
    ChatResponse,
    ToolSpec,
    Usage,
    assistant_message,
    system_message,
    tool_message,
    user_message,
)
from engram.llm.settings import LLMSettings
from engram.provider_keys import set_variable
from engram.registry import resolve

_DEFAULT_MODELS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-3-5-haiku-latest",
    "gemini": "gemini-2.0-flash",
}


def env_key_variable(provider: str) -> str | None:
    """The provider's usual variable its key is taken from when ``llm.api_key`` is unset, the first of
    them set: the provider class's own ``key_variables`` (those its missing-key error names), None for
    a provider that takes no key or that no one registered."""
    try:
        variables = getattr(resolve("llm", provider), "key_variables", ())
    except ConfigError:
        return None
    return set_variable(variables)


def create_provider(settings: LLMSettings) -> ChatProvider | None:
    """The configured provider, or None when no LLM is configured (``provider = "none"``).

    The key comes from settings, else the provider's usual environment variable. Raises
    ``ConfigError`` for an unknown provider or a missing model, ``MissingDependencyError`` without httpx.
    """
    if not settings.enabled:
        return None
    cls = resolve("llm", settings.provider)
    model = settings.model or _DEFAULT_MODELS.get(settings.provider, "")
    if not model:
        raise ConfigError(f"llm.model: provider {settings.provider!r} needs a model name (ENGRAM_LLM__MODEL)")
    variable = env_key_variable(settings.provider)
    key = settings.api_key.get_secret_value() if settings.api_key else os.environ[variable] if variable else ""
    return cls(
        model,
        base_url=settings.base_url or None,
        api_key=key or None,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        backoff_s=settings.backoff_s,
        default_max_tokens=settings.max_tokens,
        default_temperature=settings.temperature,
    )


__all__ = [
    "ChatProvider", "ChatResponse", "LLMSettings", "ToolSpec", "Usage", "assistant_message", "create_provider",
    "system_message", "tool_message", "user_message",
]
