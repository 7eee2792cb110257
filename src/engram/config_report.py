"""What ``engram config show`` and ``engram.config.describe_settings()`` tell: every setting engram
runs with, its value, and where that value came from, with no secret in it.

``config.py`` reads the settings and knows their sources; this module walks the settings read,
names each by its dotted name (``embeddings.provider``, as the docs and the ``ENGRAM_`` variables
name it), takes where it was given from ``config.py`` (``SettingSource``), and keeps secrets out.
A secret's value never leaves this module, only whether it is set: a ``SecretStr`` setting (the API
keys, the encryption key) or one of ``SECRET_SETTINGS`` (``database_url``, whose URL or key=value
form may hold a password). Any other text that is a URL with a password in it (a ``base_url``
written ``https://user:pass@host``) has the password masked. A value no source gave that differs
from its default was set by engram from other settings (``backend`` follows ``database_url``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

if TYPE_CHECKING:
    from engram.config import Settings

KeyPath = tuple[str, ...]
SourceKind = Literal["default", "argument", "environment", "config file", "derived"]
# Settings that are secrets without being SecretStr: a database URL carries its password.
SECRET_SETTINGS: frozenset[KeyPath] = frozenset({("database_url",)})
SET, NOT_SET = "(set)", "(not set)"


@dataclass(frozen=True, slots=True)
class SettingSource:
    """Where a setting's value came from. ``name``: the argument, the variable
    (``ENGRAM_RECALL__LIMIT``, PtrClaw's ``EMBEDDING_PROVIDER``), the key in ``file`` (``recall.limit``,
    PtrClaw's ``memory.search.max_results``), or for ``derived`` what engram followed; ``foreign``:
    another system's key or variable, translated onto engram's setting."""

    kind: SourceKind
    name: str | None = None
    file: Path | None = None
    foreign: bool = False
    # What engram made of the value given, after where it came from: ``path`` left unset or empty
    # (PtrClaw's ``"path": ""``, its "auto") is the backend's default file, which the value shows.
    note: str | None = None

    def __str__(self) -> str:
        return self._where() + (f": {self.note}" if self.note else "")

    def _where(self) -> str:
        if self.kind == "argument":
            return f"argument {self.name}"
        if self.kind == "environment":
            return f"{self.name}" + (" (another system's variable, translated)" if self.foreign else "")
        if self.kind == "config file":
            return f"{self.file}: {self.name}" + (" (another system's key, translated)" if self.foreign else "")
        if self.kind == "derived":
            return f"set by engram: {self.name}"
        return "default"


DEFAULT = SettingSource("default")


@dataclass(frozen=True, slots=True)
class DescribedSetting:
    """One setting: its dotted ``name``, its ``value`` ready for JSON (text, number, bool, list or
    None; a secret's is ``"(set)"`` or ``"(not set)"``), and its ``source``."""

    name: str
    value: Any
    source: SettingSource
    secret: bool = False

    @property
    def changed(self) -> bool:
        """Given somewhere (or set by engram from another setting), not left at its default."""
        return self.source.kind != "default"

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "from": str(self.source), "kind": self.source.kind, "changed": self.changed,
                "secret": self.secret}


@dataclass(frozen=True, slots=True)
class SettingsReport:
    """Every setting in the order the settings declare them, and the config file looked at (which
    may not exist: then every value is a default, a variable's or an argument's)."""

    config_file: Path
    config_file_exists: bool
    settings: tuple[DescribedSetting, ...]

    def changed(self) -> tuple[DescribedSetting, ...]:
        return tuple(setting for setting in self.settings if setting.changed)

    def as_dict(self, *, changed_only: bool = False) -> dict[str, Any]:
        """As JSON: ``{"config_file": ..., "config_file_exists": ..., "settings": {name: {...}}}``."""
        shown = self.changed() if changed_only else self.settings
        return {"config_file": str(self.config_file), "config_file_exists": self.config_file_exists,
                "settings": {setting.name: setting.as_dict() for setting in shown}}


def describe(settings: Settings, source_of: Callable[[KeyPath], SettingSource | None], config_file: Path,
             config_file_exists: bool) -> SettingsReport:
    """The report of ``settings``; ``source_of`` names where a setting was given (None: nowhere)."""
    described = [_one(settings, target, value, default, secret, source_of)
                 for target, value, default, secret in _leaves(settings)]
    return SettingsReport(config_file, config_file_exists, tuple(described))


def _leaves(model: BaseModel, prefix: KeyPath = ()) -> list[tuple[KeyPath, Any, Any, bool]]:
    """(path, value, default, whether a secret) of every setting below ``model``, sections walked into.
    A None that means no limit (``settings_section.UNLIMITED``) is that word, as a config file writes it."""
    found: list[tuple[KeyPath, Any, Any, bool]] = []
    for name, info in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found += _leaves(value, (*prefix, name))
        else:
            none_is = info.json_schema_extra.get("none_is") if isinstance(info.json_schema_extra, dict) else None
            default = info.get_default(call_default_factory=True)
            if none_is is not None:  # (the default too, or an unlimited default would read as changed)
                value, default = (none_is if value is None else value), (none_is if default is None else default)
            target = (*prefix, name)
            # By its declared type: an unset key is None, no SecretStr to recognise it by.
            secret = SecretStr in (info.annotation, *get_args(info.annotation)) or target in SECRET_SETTINGS
            found.append((target, value, default, secret))
    return found


def _one(settings: Settings, target: KeyPath, value: Any, default: Any, secret: bool,
         source_of: Callable[[KeyPath], SettingSource | None]) -> DescribedSetting:
    source = source_of(target) or _derived(settings, target, value, default) or _provider_variable(settings, target)
    name = ".".join(target)
    if target == ("path",) and value is None and settings.backend in _FILE_BACKENDS:
        return _default_file(settings, source)
    if secret:
        given = value is not None and value != "" or source.kind == "environment"
        return DescribedSetting(name, SET if given else NOT_SET, source, secret=True)
    return DescribedSetting(name, _shown(value), source)


# The backends that keep the memories in a file (``Settings.database_path``): ``path`` unset is theirs in the home.
_FILE_BACKENDS = frozenset({"sqlite", "jsonfile"})


def _default_file(settings: Settings, source: SettingSource) -> DescribedSetting:
    """``path`` not set, or set empty (PtrClaw's ``"path": ""`` is its "auto"): shown as the file the
    backend uses, with where the empty value came from and why that file. "none" told the user
    nothing, and read as if no file were used."""
    from dataclasses import replace

    given = "not set" if source.kind == "default" else "empty"
    used = (f"agent {settings.agent}'s own file (per_agent_databases)" if settings.per_agent_databases
            else f"the {settings.backend} backend's file in the home")
    return DescribedSetting("path", str(settings.database_path(settings.agent)), replace(source, note=f"{given}, so {used}"))


def _derived(settings: Settings, target: KeyPath, value: Any, default: Any) -> SettingSource | None:
    """The reason engram set ``target`` itself (Settings' model validators), None when it did not."""
    if target == ("backend",) and settings.database_url and value == "postgres":
        return SettingSource("derived", "database_url names a PostgreSQL database")
    if target == ("files", "enabled") and settings.privacy.encrypted and value is False:
        return SettingSource("derived", "an encryption key is set, so no plain copies are written")
    if value != default and not isinstance(value, SecretStr):
        return SettingSource("derived", "follows other settings")
    return None


def _provider_variable(settings: Settings, target: KeyPath) -> SettingSource:
    """A key left unset is the provider's usual variable's (``OPENAI_API_KEY``), when that is set."""
    variable = None
    if target == ("embeddings", "api_key"):
        from engram.embed.settings import env_key_variable

        variable = env_key_variable(settings.embeddings.provider)
    elif target == ("llm", "api_key"):
        from engram.llm import env_key_variable as llm_key_variable

        variable = llm_key_variable(settings.llm.provider)
    return DEFAULT if variable is None else SettingSource("environment", variable)


def _shown(value: Any) -> Any:
    """``value`` ready for JSON, a URL's password masked."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [_shown(item) for item in value]
    if isinstance(value, str) and "://" in value:
        return _without_password(value)
    return value


def _without_password(url: str) -> str:
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:  # not a URL after all (a bad port): nothing shown that could be one's password
        return "(not shown: looks like a URL that holds a password)" if "@" in url else url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
