"""When a remote provider (a chat model, an embedding model) needs an API key: one rule for both.

A provider of a paid service needs a key at that service's own address: sent without one, every
request was refused (offline: reported as "cannot reach"), so the provider is refused when it is
made, naming the setting and the variables a key is read from. A ``base_url`` of the user's own
(an OpenAI-compatible local server, a proxy that adds the key) may need none, and is taken as is.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.errors import ConfigError


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
