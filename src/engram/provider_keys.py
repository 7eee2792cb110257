"""When a remote provider (a chat model, an embedding model) needs an API key, and which variables
it is read from: one rule and one table for both.

A provider of a paid service needs a key at that service's own address: sent without one, every
request was refused (offline: reported as "cannot reach"), so the provider is refused when it is
made, naming the setting and the variables a key is read from. A ``base_url`` of the user's own
(an OpenAI-compatible local server, a proxy that adds the key) may need none, and is taken as is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from engram.errors import ConfigError

# Each paid service's usual environment variables for its key, the first set one taken: one table for
# the service's chat and embedding providers alike (the embedding side read GOOGLE_API_KEY for Gemini
# and the chat side did not, so one shell's key worked for one and was "missing" for the other).
# GOOGLE_API_KEY is what Google's own SDKs read beside GEMINI_API_KEY.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}


def key_variables(service: str) -> tuple[str, ...]:
    """The service's usual variables a key is read from, in the order tried; none: it takes no key."""
    return KEY_VARIABLES.get(service, ())


def set_variable(variables: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The first of ``variables`` set (non-empty) in ``env`` (the process environment by default), if any."""
    env = os.environ if env is None else env
    return next((variable for variable in variables if env.get(variable)), None)


def refuse_missing_key(
    section: str,
    provider: str,
    *,
    api_key: str | None,
    base_url: str,
    default_base_url: str,
    key_variables: Sequence[str],
) -> None:
    """Refuse a provider made without a key at its own service's address.

    ``section`` is the settings section (``llm``, ``embeddings``) whose ``api_key`` and ``base_url``
    the message names; ``key_variables`` are the provider's usual variables (none: it takes no key).

    Raises:
        ConfigError: no key, some key variable, and ``base_url`` is the provider's default.
    """
    if api_key or not key_variables or base_url.rstrip("/") != default_base_url.rstrip("/"):
        return
    raise ConfigError(
        f"{section}.api_key: the {provider} provider needs an API key at {default_base_url.rstrip('/')}: set "
        f"{section}.api_key (ENGRAM_{section.upper()}__API_KEY) or {' or '.join(key_variables)}, or set "
        f"{section}.base_url to a server of your own that needs none")
