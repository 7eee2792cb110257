"""Settings, read in one place: explicit arguments > environment > config file > defaults.

Environment variables are ``ENGRAM_<NAME>``, nested with ``__`` (``ENGRAM_RECALL__TEXT_WEIGHT``).
The config file is the one ``--config PATH`` names (``load_settings(config=...)``), else
``$ENGRAM_CONFIG``, else the first of ``config.toml``, ``config.yaml``, ``config.yml`` and
``config.json`` in the home (``--home``, else ``default_home()``); a file named either way must
exist. TOML, YAML or JSON by its suffix; keys mirror the field names (``backend = "sqlite"``,
``[recall]`` ``text_weight = 0.5``). Only ``Engram.from_settings`` and the interfaces' start-up
call ``load_settings``; everything else receives values. ``describe_settings`` reads them the same
way and tells where each value came from (``config_report`` words it, secrets left out), for
``engram config show``.

An existing deployment's settings carry over: PtrClaw's, sclaw's, ClawCode's and Clawless's
variables and config files are mapped onto engram's settings by ``foreign_settings`` (which
names each key). Their variables rank below ``ENGRAM_*`` ones and above the config file; inside a
file, engram's own keys win. A mapped value engram refuses is named by the key (or variable) it
was written as, beside engram's setting: ``memory.search.max_results (recall.limit): ...``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from engram import jsondoc
from engram.agent.settings import ChatSettings
from engram.config_report import SettingSource, SettingsReport, describe
from engram.db.pg_settings import DSN_ALLOWED, PostgresSettings, dsn_problem
from engram.disk_names import portable
from engram.embed.settings import EmbeddingSettings
from engram.errors import ConfigError, ValidationError, validation_message
from engram.files.settings import FilesSettings
from engram.foreign_settings import (
    FOREIGN_CLAWLESS,
    FOREIGN_ENV,
    KeyPath,
    Origins,
    map_memory_block,
    map_ptrclaw_agent_block,
    map_sclaw,
    map_variables,
    warn_once,
)
from engram.history.settings import HistorySettings
from engram.interfaces.settings import ServerSettings
from engram.lifecycle.settings import LifecycleSettings
from engram.llm.settings import LLMSettings
from engram.model import make_scope, range_words
from engram.privacy import PrivacySettings
from engram.settings_section import SettingsSection
from engram.store.index_settings import FullTextSettings, VectorIndexSettings
from engram.temporal.settings import TimeSettings

_T = TypeVar("_T")


def set_variable(name: str) -> str | None:
    """The environment variable ``name``'s value, None when it is unset, empty or blank: an empty
    variable counts as unset (``Settings``), and one of spaces alone as well, or ``ENGRAM_HOME='  '``
    kept the store in a folder named by two spaces in the current folder."""
    value = os.environ.get(name)
    return value if value is not None and value.strip() else None


def default_home() -> Path:
    """``$ENGRAM_HOME``, else Clawless's ``$AGENT_BRIDGE_HOME``, else ``~/.engram``."""
    return Path(set_variable("ENGRAM_HOME") or set_variable("AGENT_BRIDGE_HOME")
                or Path.home() / ".engram").expanduser()


def _read_config_file(path: Path) -> dict[str, Any]:
    """The config file as a dict (TOML, YAML or JSON by suffix); {} when it does not exist."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    suffix = path.suffix.lower()
    if suffix == ".json":
        import json

        document = json.loads(text)
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ConfigError(f"{path} is YAML: pip install 'engram-recall[files]' to read it") from None
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"malformed YAML: {exc}") from None
    else:
        import tomllib

        document = tomllib.loads(text)
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ValueError("the top level must be a table of settings")
    return document


def _unknown_keys(document: dict[str, Any], model: type[BaseModel], *, top_level: bool = True) -> list[tuple[str, list[str]]]:
    """The keys of ``document`` that name no setting of ``model`` (``top_level=False``: only inside
    its sections), as dotted names, each with the known names of its table (for a suggestion)."""
    found: list[tuple[str, list[str]]] = []
    known = [name for field_name, info in model.model_fields.items() for name in (field_name, info.alias) if name]
    for key, value in document.items():
        info = model.model_fields.get(key)
        if info is None:
            if top_level:  # a section's setting written at the top ("fuzion") is suggested by its dotted name
                found.append((str(key), known + _section_settings(model)))
            continue
        section = info.annotation
        if (isinstance(section, type) and issubclass(section, BaseModel) and isinstance(value, dict)
                and section.model_config.get("extra") != "forbid"):  # (that one refuses an unknown key itself)
            found += [(f"{key}.{name}", names) for name, names in _unknown_keys(value, section)]
    return found


def _section_settings(model: type[BaseModel]) -> list[str]:
    """The settings inside ``model``'s sections, as dotted names (``recall.fusion``)."""
    names: list[str] = []
    for key, info in model.model_fields.items():
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names += [f"{key}.{name}" for name in section.model_fields]
            names += [f"{key}.{name}" for name in _section_settings(section)]
    return names


def _suggestion(name: str, known: list[str]) -> str:
    """The known name closest to ``name``'s last part: compared by their own last parts, the names
    of ``name``'s own table first (``known`` lists them first)."""
    by_last: dict[str, str] = {}
    for candidate in known:
        by_last.setdefault(candidate.rsplit(".", 1)[-1], candidate)
    close = difflib.get_close_matches(name.rsplit(".", 1)[-1], list(by_last), n=1)
    return f" (did you mean {by_last[close[0]]!r}?)" if close else ""


def _warn_of_unknown_keys(path: Path, document: dict[str, Any], *, foreign: bool) -> None:
    """A mistyped setting is otherwise ignored unsaid. In a file that also holds another system's
    keys, only engram's own sections are checked: the other system's top-level keys are its own."""
    for name, known in _unknown_keys(document, Settings, top_level=not foreign):
        warn_once(f"{path}: {name}", f"not a setting engram knows, ignored{_suggestion(name, known)}")


class _ConfigFileSource(PydanticBaseSettingsSource):
    """engram's keys from the config file, with the other systems' keys mapped beside them."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path, agent: str | None, *, required: bool) -> None:
        super().__init__(settings_cls)
        self.path = path
        self.agent = agent  # given as an argument (--agent), for sclaw's per-agent switch
        self.required = required  # named on the command line: a missing file is an error
        self.values: dict[str, Any] = {}
        self.origins: Origins = {}  # the settings its foreign keys gave, to name a refused one

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        if self.required and not self.path.is_file():
            raise ConfigError(f"config file {self.path} does not exist (named by --config or ENGRAM_CONFIG)")
        document = _read_config_file(self.path)
        values = {k: v for k, v in document.items() if k in self.settings_cls.model_fields}
        if isinstance(values.get("agent"), dict):  # PtrClaw's agent block, not engram's agent name
            del values["agent"]
        named = document.get("agent")
        agent = self.agent or set_variable("ENGRAM_AGENT") or str(named if named and not isinstance(named, dict) else "default")
        env = dict(os.environ)  # for the ${VAR} a foreign file may hold
        try:
            map_variables(document, values, env=env, origins=self.origins)
            map_sclaw(document, values, agent, env, self.origins)
            map_memory_block(document, values, env, self.origins)
            map_ptrclaw_agent_block(document, values, env, self.origins)
        except ConfigError as exc:
            raise ConfigError(f"config file {self.path}: {exc}") from None
        # Another system's file: one it gave settings from, or one holding none of engram's keys.
        foreign = bool(self.origins) or not any(k in self.settings_cls.model_fields for k in document)
        _warn_of_unknown_keys(self.path, document, foreign=foreign)
        self.values = values
        return values


class _EnvSource(EnvSettingsSource):
    """``ENGRAM_*`` variables, as pydantic-settings reads them, with a value that is not the JSON a
    list or table setting takes refused naming the variable: pydantic-settings said only `error
    parsing value for field "privacy" from source "EnvSettingsSource"`, which engram then blamed on
    the config file (``ENGRAM_PRIVACY__KINDS=email`` for ``'["email"]'``)."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Blank counts as unset, as empty does (``env_ignore_empty`` drops only ""): ENGRAM_PATH='  '
        # kept the store in a file named by two spaces, and ENGRAM_AGENT='  ' was refused as a name.
        return {name: value for name, value in super()._load_env_vars().items() if value is None or value.strip()}

    def prepare_field_value(self, field_name: str, field: Any, value: Any, value_is_complex: bool) -> Any:
        try:
            return super().prepare_field_value(field_name, field, value, value_is_complex)
        except ValueError:
            pass
        # Which variable: the section's own (ENGRAM_PRIVACY='{...}'), else each nested one alone.
        top = self.env_prefix + field_name
        top = top if self.case_sensitive else top.lower()  # the names as env_vars holds them
        nested = {name: text for name, text in self.env_vars.items()
                  if name.startswith(top + self.env_nested_delimiter) and text is not None}
        culprit = top if top in self.env_vars else None
        for name, text in nested.items():
            if culprit is not None:
                break
            try:
                self.explode_env_vars(field_name, field, {name: text})
            except ValueError:
                culprit = name
        culprit = culprit or top
        shown = next((name for name in os.environ if name.lower() == culprit.lower()), culprit.upper())
        setting = ".".join(culprit[len(self.env_prefix):].split(self.env_nested_delimiter))
        raise ConfigError(f"invalid settings ({setting}: {jsondoc.shown(self.env_vars.get(culprit, ''))} is not JSON "
                          "(allowed: JSON for a list or table setting, e.g. [\"a\", \"b\"] or {\"key\": 1}) "
                          f"(from {shown}))")


class _ForeignEnvSource(PydanticBaseSettingsSource):
    """The other systems' environment variables (Clawless's, PtrClaw's, ClawCode's), below ``ENGRAM_*`` ones."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        super().__init__(settings_cls)
        self.values: dict[str, Any] = {}
        self.origins: Origins = {}  # every value here is mapped: the variable it came from

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        map_variables(dict(os.environ), values, tables=(FOREIGN_CLAWLESS, FOREIGN_ENV), origins=self.origins)
        self.values = values
        return values


class RecallSettings(SettingsSection):
    """How recall ranks: weighted fusion of text and vector scores (PtrClaw), or RRF."""

    # What a recall returns when its caller names no limit; a caller may ask for at most 100
    # (model.MAX_RECALL_LIMIT), so a larger default would refuse every such recall.
    limit: int = Field(10, ge=1, le=100)
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
    # An empty variable counts as unset (``ENGRAM_HOME=`` is ``~/.engram``, not the current folder), as
    # for the foreign systems' variables: a compose file or script passing on a variable it does not
    # have gives an empty one, and that must not move the store or change a setting.
    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_", env_nested_delimiter="__", extra="ignore", validate_default=True, env_ignore_empty=True,
        allow_inf_nan=False,  # as every section (engram.settings_section): no setting means anything by nan or inf
    )

    home: Path = Field(default_factory=default_home)
    backend: str = "sqlite"
    # File of the sqlite/jsonfile backends; empty means ``home/memory.db`` or ``home/memory.json``.
    path: Path | None = None
    # One database per agent under ``home/agents/<agent>/`` instead of one shared file (``agent_folder``).
    per_agent_databases: bool = False
    agent: str = "default"
    session: str | None = None
    max_content_chars: int = Field(8000, ge=1, le=1_000_000)
    # SQLite keeps busy_timeout in a 32-bit int: a larger value read back as 0, no wait at all.
    busy_timeout_ms: int = Field(30_000, ge=0, le=2_147_483_647)
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
    # Where some settings were given (``load_settings``), for errors about a value the settings
    # took and the world refused later (a database that will not let engram in).
    _given_at: dict[str, str] = PrivateAttr(default_factory=dict)

    def named(self, setting: str) -> str:
        """``setting`` with where its value was given, when ``load_settings`` read it:
        ``database_url (from ENGRAM_DATABASE_URL)``, ``database_url (from config file PATH)``."""
        return self._given_at.get(setting, setting)

    # Checked as the settings are read, so the refusal names where the value was set (the variable,
    # the config file, an argument) as every other setting's does; refused later, as the store
    # opened, it named the setting alone.
    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        from engram.registry import refuse_unknown  # what is registered, plug-ins included

        try:
            refuse_unknown("backend", value)
        except ValidationError as exc:  # pydantic's error names the setting and where it was set
            raise ValueError(exc.reason) from None
        return value

    @field_validator("path", mode="before")
    @classmethod
    def _empty_path_is_unset(cls, value: Any) -> Any:
        # "" is "not set" (the default file in home), as PtrClaw's `"path": ""` means "auto": taken
        # as a path it was "." (the working folder), which no backend can open.
        return None if value == "" else value

    @field_validator("home", "path", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return None if value is None else value.expanduser()

    @field_validator("home", mode="after")
    @classmethod
    def _a_folder(cls, value: Path) -> Path:
        # A file named as the home (its memory.db, say) read as an empty store, and a write said the
        # "folder" was not writable: whoever named it meant the folder that file is in.
        if value.exists() and not value.is_dir():
            raise ValueError(f"{value} is a file, not a folder (allowed: the folder engram keeps its files in, "
                             "made when it does not exist)")
        return value

    @field_validator("path", mode="after")
    @classmethod
    def _a_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        # A folder named as the database file (the home, say) failed as the store opened with
        # SQLite's "unable to open database file", naming neither the setting nor where it was set.
        if value is not None and value.is_dir():
            held = "JSON file" if info.data.get("backend") == "jsonfile" else "SQLite database file"
            raise ValueError(f"{value} is a folder, not a file (allowed: the path of the {held}, made when it "
                             "does not exist; leave it unset for the one in home)")
        return value

    @field_validator("database_url", mode="after")
    @classmethod
    def _a_postgresql_database(cls, value: str | None) -> str | None:
        # PostgreSQL is the only database a URL names (a SQLite file is ``path``): any other value
        # would be ignored and the memories written to home/memory.db unsaid. libpq's key=value
        # form (``host=db dbname=engram``) is a PostgreSQL DSN too. The value is not repeated: it
        # may hold a password.
        problem = dsn_problem(value) if value else None
        if problem:
            raise ValueError(f"{problem} (allowed: {DSN_ALLOWED}; a SQLite file is set by path)")
        return value

    @model_validator(mode="after")
    def _backend_from_url(self) -> Settings:
        # ENGRAM_DATABASE_URL=postgresql://... alone is enough to switch to PostgreSQL; a backend
        # chosen anywhere (--backend sqlite, its variable, the config file) is kept.
        if self.database_url:
            if self.backend == "sqlite" and "backend" not in self.model_fields_set:
                self.backend = "postgres"
        return self

    @model_validator(mode="after")
    def _no_plain_copies_of_an_encrypted_store(self) -> Settings:
        # Someone who sets an encryption key expects no readable copy of their memories on disk:
        # the memory folder (plain markdown/YAML by design) is then off unless they switch it on.
        if self.privacy.encrypted and "enabled" not in self.files.model_fields_set:
            self.files.enabled = False
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
        given = getattr(init_settings, "init_kwargs", {})
        named = _CONFIG_FILE.get()
        # A file named (--config, $ENGRAM_CONFIG) must exist: a mistyped name would run on defaults unsaid.
        required = named is not None or set_variable("ENGRAM_CONFIG") is not None
        sources = (init_settings, _EnvSource(settings_cls), _ForeignEnvSource(settings_cls), _ConfigFileSource(
            settings_cls, config_path(given.get("home"), named), given.get("agent"), required=required))
        _SOURCES.set(sources)
        return sources

    def database_path(self, agent: str | None = None) -> Path:
        """Where the file backends keep their data for ``agent`` (shared file unless per-agent)."""
        suffix = "json" if self.backend == "jsonfile" else "db"
        if self.path is not None and not self.per_agent_databases:
            return self.path
        if self.per_agent_databases:
            return self.agent_folder(agent) / f"memory.{suffix}"
        return self.home / f"memory.{suffix}"

    def agent_folder(self, agent: str | None = None) -> Path:
        """``home/agents/<agent>/``, the folder of ``agent``'s own database (``per_agent_databases``),
        the agent's name written by ``disk_names.portable`` (``Alice`` is ``!alice``, ``adk:app:u1``
        is ``adk+app+u1``) so that no two agents share a folder on any file system. Only says where:
        ``root.settle_agent_folder`` moves a folder an earlier version named as is. Raises
        ``ValidationError`` (field ``agent``) for a bad name."""
        return self.home / "agents" / portable(agent or self.agent)

    def transcripts_folder(self) -> Path:
        """Where transcripts are written: ``history.transcripts_dir``, else ``home/transcripts``."""
        return self.history.transcripts_dir or self.home / "transcripts"

    def automatic_transcripts_folder(self) -> Path | None:
        """Where turn indexing (``history.transcript_auto_index``) rewrites transcripts, or None to
        index the turns without writing any. Someone who sets an encryption key expects no readable
        copy of their conversations on disk, as of their memories (the memory folder is off too):
        transcripts are plain markdown, so with a key they are written only to a folder the user
        named in ``history.transcripts_dir``."""
        if self.privacy.encrypted and self.history.transcripts_dir is None:
            return None
        return self.transcripts_folder()


    def response_cache_file(self) -> Path | None:
        """Where the agent keeps its response cache (``chat.response_cache``) between runs, or None
        to keep it in memory only. The cache holds the model's answers, which repeat what the
        memories and the conversation say, as plain JSON: with an encryption key set it is never
        written (it lasts while the process runs)."""
        return None if self.privacy.encrypted else self.home / RESPONSE_CACHE_NAME


RESPONSE_CACHE_NAME = "response_cache.json"
CONFIG_NAMES = ("config.toml", "config.yaml", "config.yml", "config.json")
# The file ``load_settings(config=...)`` names (``--config``), for the sources built inside Settings().
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("engram_config_file", default=None)
# The sources the last Settings() read, highest rank first: a refused value is named by its origin.
_SOURCES: ContextVar[tuple[PydanticBaseSettingsSource, ...]] = ContextVar("engram_setting_sources", default=())
# How the caller's user typed the arguments ``load_settings`` was given (``{"backend": "--backend"}``).
_ARGUMENT_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar("engram_argument_names", default=None)


def _holds(tree: Any, path: KeyPath) -> bool:
    for part in path:
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def _origin(loc: tuple[str | int, ...]) -> tuple[str | None, str | None]:
    """Where the value pydantic refused at ``loc`` was given: the other system's key (or variable)
    it was written as, None when engram's own name gave it; and the place, for the user to find
    it (``from ENGRAM_RECALL__LIMIT``, ``from config file PATH``, ``from an argument``), None when
    it came from no source (a default). The source of highest rank holding the setting gave it."""
    sources = _SOURCES.get()
    path = tuple(str(part) for part in loc)
    # loc may go deeper than a source's key (pydantic names a union's member): the longest prefix
    # any source holds is the setting; among the sources holding it, the highest rank gave it.
    for n in range(len(path), 0, -1):
        target = path[:n]
        for rank, source in enumerate(sources):
            origins: Origins | None = getattr(source, "origins", None)
            if origins is not None and target in origins:
                return origins[target], _place(source, rank, target)
            if _holds(getattr(source, "values", None) if origins is not None else source(), target):
                return None, _place(source, rank, target)
    return None, None


def _place(source: PydanticBaseSettingsSource, rank: int, target: KeyPath) -> str | None:
    """The words naming where ``source`` (at ``rank`` in ``Settings.settings_customise_sources``)
    gave the setting ``target``."""
    if isinstance(source, _ConfigFileSource):
        return f"from config file {source.path}"
    if isinstance(source, _ForeignEnvSource):
        return None  # the variable's own name says it
    if rank == 0:
        typed = (_ARGUMENT_NAMES.get() or {}).get(".".join(target))
        return f"from {typed}" if typed else _FROM_AN_ARGUMENT
    variable = _variable(target)
    return f"from {variable}" if variable else "from the environment"


def _variable(target: KeyPath) -> str | None:
    """The ``ENGRAM_*`` variable that gave ``target``, as the environment spells it:
    ENGRAM_RECALL__LIMIT, or a section's variable holding JSON (ENGRAM_RECALL='{"limit": ...}');
    pydantic-settings reads names without regard to case."""
    names = {name.upper(): name for name in os.environ}
    for n in range(len(target), 0, -1):
        name = "ENGRAM_" + "__".join(target[:n]).upper()
        if name in names:
            return names[name]
    return None


def _problem(error: Any) -> str:
    """One refused value for ``ConfigError``: engram's setting, after the foreign key it was
    written as, and where it was given."""
    # A list's item as every door names one (privacy.kinds[0]), so the refusal names the setting
    # ("unknown kinds"), not the index ("unknown 0").
    setting = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
    origin, place = _origin(error["loc"])
    message = validation_message(_out_of_range(error), setting)
    where = f" ({place})" if place else ""
    return f"{origin} ({setting}): {message}{where}" if origin else f"{setting}: {message}{where}"


# pydantic's bound errors: each names only the bound crossed, in its words ("Input should be
# greater than or equal to 0"), where every other refusal says what is allowed.
_RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def _out_of_range(error: Any) -> Any:
    """A bound error of pydantic's as engram's refusal of a number out of range, naming the
    setting's whole range as the engine's ``parse_integer``/``parse_number`` do
    (``recall.limit: -1 is out of range (allowed: 1 to 100)``); any other error as it is."""
    if error.get("type") not in _RANGE_ERRORS:
        return error
    field = _field_at(error["loc"])
    if field is None:
        return error
    low = high = None
    low_strict = high_strict = False
    for rule in field.metadata:
        if getattr(rule, "ge", None) is not None:
            low = rule.ge
        elif getattr(rule, "gt", None) is not None:
            low, low_strict = rule.gt, True
        if getattr(rule, "le", None) is not None:
            high = rule.le
        elif getattr(rule, "lt", None) is not None:
            high, high_strict = rule.lt, True
    whole = int in (field.annotation, *get_args(field.annotation))
    allowed = range_words(low, high, whole=whole, low_strict=low_strict, high_strict=high_strict)
    value = error.get("input")
    # A variable's "-1" is the number the user wrote, not text: shown as they wrote it.
    shown = value.strip() if isinstance(value, str) else jsondoc.shown(value)
    return {**error, "ctx": {"problem": f"{shown} is out of range", "allowed": allowed}}


def _field_at(loc: tuple[str | int, ...]) -> Any:
    """The ``FieldInfo`` of the setting at pydantic's ``loc`` (None: not a setting's own value, a
    list's item say)."""
    model: Any = Settings
    field = None
    for part in loc:
        fields = getattr(model, "model_fields", None)
        if not isinstance(part, str) or fields is None or part not in fields:
            return None
        field = fields[part]
        model = next((arg for arg in (field.annotation, *get_args(field.annotation))
                      if isinstance(arg, type) and issubclass(arg, BaseModel)), None)
    return field


_FROM_AN_ARGUMENT = "from an argument"


def _check_scope_where_set(settings: Settings) -> None:
    """The agent and session names the engine takes (``model.make_scope``'s rule), refused here when
    the environment or the config file gave them, naming where as every other setting's refusal
    does (``agent: "a/b" is not a valid name (...) (from ENGRAM_AGENT)``): the engine's refusal
    named only ``agent``, leaving the user to guess where it was set. One given as an argument is
    left to the engine, which names it as its caller typed it (the CLI's ``--agent``, exit 2)."""
    try:
        make_scope(settings.agent, settings.session)
    except ValidationError as exc:
        origin, place = _origin((exc.field,))
        if place == _FROM_AN_ARGUMENT or (origin is None and place is None):
            return
        error = {"loc": (exc.field,), "type": "value_error", "ctx": {"error": exc.reason}}
        raise ConfigError(f"invalid settings ({_problem(error)})") from None


# Settings whose place ``Settings.named`` tells (reading it walks every source: only for these).
_NAMED_WITH_PLACE = ("database_url", "backend")


def _named(setting: str) -> str:
    """``setting`` as ``_problem`` names it, with where it was given (while the sources are set)."""
    origin, place = _origin((setting,))
    where = ", ".join(part for part in (setting if origin else "", place or "") if part)
    return f"{origin or setting} ({where})" if where else setting


def config_path(home: str | Path | None = None, named: str | Path | None = None) -> Path:
    """The config file: ``named`` (``--config``), else ``$ENGRAM_CONFIG``, else the first of
    ``CONFIG_NAMES`` in the home (``home`` when given, as ``--home`` gives it, else
    ``default_home()``) that exists, else ``config.toml`` there (may not exist)."""
    explicit = named or set_variable("ENGRAM_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    home = default_home() if home is None else Path(home).expanduser()
    return next((home / name for name in CONFIG_NAMES if (home / name).is_file()), home / "config.toml")


def load_settings(*, config: str | Path | None = None, argument_names: Mapping[str, str] | None = None,
                  **overrides: Any) -> Settings:
    """Read settings; ``config`` names the config file (``--config``; ``~`` expanded), which must
    exist. ``argument_names``: how the user typed some of the arguments (the CLI's
    ``{"backend": "--backend"}``), for ``Settings.named`` to say "from --backend" rather than
    "from an argument". Raises ``ConfigError`` naming the setting at fault."""
    names = _ARGUMENT_NAMES.set(argument_names)
    try:
        return _read(config, overrides, lambda settings: settings)
    finally:
        _ARGUMENT_NAMES.reset(names)


def describe_settings(*, config: str | Path | None = None, **overrides: Any) -> SettingsReport:
    """Every setting engram runs with, read as ``load_settings`` reads them (same arguments), each
    with its value and where it came from (a default, an argument, a variable, the config file's
    key, another system's key or variable it was translated from). Secrets (API keys, the
    encryption key, ``database_url``) are never given, only whether they are set. Reads nothing
    but the settings: makes no home, database or folder. Raises ``ConfigError`` as ``load_settings``."""

    def report(settings: Settings) -> SettingsReport:
        sources = _SOURCES.get()
        held = [(rank, source, _values_of(source)) for rank, source in enumerate(sources)]
        file = next(source for source in sources if isinstance(source, _ConfigFileSource))
        return describe(settings, lambda target: _source_of(held, target), file.path, file.path.is_file())

    return _read(config, overrides, report)


def _values_of(source: PydanticBaseSettingsSource) -> Any:
    """What ``source`` gave (read again for the sources that keep nothing of their last read)."""
    return source.values if isinstance(source, _ConfigFileSource | _ForeignEnvSource) else source()


def _source_of(held: list[tuple[int, PydanticBaseSettingsSource, Any]], target: KeyPath) -> SettingSource | None:
    """Where the setting ``target`` was given: the source of highest rank holding it, with the
    other system's key (or variable) it was translated from; None when no source gave it."""
    for rank, source, values in held:
        origins: Origins | None = getattr(source, "origins", None)
        foreign = origins.get(target) if origins is not None else None
        if foreign is None and not _holds(values, target):
            continue
        if isinstance(source, _ConfigFileSource):
            return SettingSource("config file", foreign or ".".join(target), source.path, foreign=foreign is not None)
        if isinstance(source, _ForeignEnvSource):
            return SettingSource("environment", foreign, foreign=True)
        if rank == 0:
            return SettingSource("argument", ".".join(target))
        return SettingSource("environment", _variable(target) or "ENGRAM_" + "__".join(target).upper())
    if target == ("home",) and not set_variable("ENGRAM_HOME") and set_variable("AGENT_BRIDGE_HOME"):
        return SettingSource("environment", "AGENT_BRIDGE_HOME", foreign=True)  # default_home()'s fallback
    return None


def _read(config: str | Path | None, overrides: dict[str, Any], then: Callable[[Settings], _T]) -> _T:
    """``then`` of the settings read, called while the sources they were read from are known."""
    # An argument is written for engram alone (no other system's keys share it, as a config file's
    # may), so a misspelt one is refused: ignored, Engram.from_settings(agnet="alice") wrote to the
    # default agent.
    unknown = _unknown_keys({k: v for k, v in overrides.items() if v is not None}, Settings)
    if unknown:
        raise ConfigError("invalid settings (" + "; ".join(
            f"{name}: not a setting engram knows{_suggestion(name, known)}" for name, known in unknown) + ")")
    named = _CONFIG_FILE.set(None if config is None else Path(config).expanduser())
    sources = _SOURCES.set(())
    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})
        _check_scope_where_set(settings)
        settings._given_at = {setting: _named(setting) for setting in _NAMED_WITH_PLACE}
        return then(settings)
    except PydanticValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise ConfigError(f"invalid settings ({problems})") from None
    except (OSError, ValueError) as exc:  # unreadable or malformed TOML, YAML or JSON
        raise ConfigError(f"cannot read config file {config_path(overrides.get('home'), config)}: {exc}") from None
    finally:
        _CONFIG_FILE.reset(named)
        _SOURCES.reset(sources)
