"""The settings of the systems engram replaces, mapped onto engram's, so an old config carries over.

``config.py`` hands over what it read: a config file's parsed document, or the environment. This
module maps; it never reads the environment itself (``env`` is passed in), so config.py stays the
one reader.

- Clawless: its variables and its ``config.json`` keys of the same names (``FOREIGN_CLAWLESS``).
- PtrClaw's variables (``MEMORY_RECENCY_HALF_LIFE``, ``EMBEDDING_*``) and ``MEMORY_DB_PATH`` of
  ClawCode's MCP launch entry: environment only (``FOREIGN_ENV``).
- sclaw's YAML: ``modules: {memory.sqlite: {path, wal, busy_timeout}}``, ``data_dir`` and
  ``agents: {<agent>: {memory: {enabled}}}``. sclaw's files are never engram's: its ``data_dir``
  gives engram's home as the folder ``engram`` inside it (``SCLAW_HOME``), and the database its
  ``path`` names is not taken as engram's (a warning says to import it).
- the ``memory`` block of PtrClaw's ``config.json`` and of ClawCode's YAML
  (``FOREIGN_MEMORY_BLOCK``); PtrClaw's ``providers.openai.api_key`` is its embedding key's
  fallback, as PtrClaw has it. PtrClaw's ``path`` is engram's only with its JSON backend (the file
  is shared as it is); with SQLite it names PtrClaw's own database, not taken (a warning says so).
- the ``agent`` block of PtrClaw's ``config.json`` (``FOREIGN_PTRCLAW_AGENT``): the history limits
  its compaction reads (``max_history_messages``, ``token_limit``); its other keys are its own
  agent loop's. The block is a table where engram's ``agent`` is a name, so it is never read as one.
- mem0's ``MemoryConfig`` dict, as ``engram.compat.mem0.Memory.from_config`` is given it
  (``map_mem0_config``): its ``embedder`` and ``llm`` sections, its store sections left aside.

A mapped value never replaces one already there (engram's own key in the same file, or a source
of higher rank), see ``_put``; each one put is recorded in ``origins`` (engram's setting -> the
foreign key or variable), so a value engram then refuses is named as the user wrote it. A string
in a foreign file may name an environment variable as ``${VAR}`` (ClawCode writes ``api_key:
${OPENAI_API_KEY}``); a bare ``$VAR`` is kept as written, because a key or a path may hold a ``$``.
A key engram cannot honour is never dropped silently: it is logged once per process, naming the
key. A value that cannot be converted raises ``ConfigError`` naming the foreign key (or variable)
and what is allowed.
"""

from __future__ import annotations

import difflib
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from engram.errors import ConfigError

log = logging.getLogger("engram.config")

KeyPath = tuple[str, ...]  # a nested key, outermost first: ("lifecycle", "hygiene", "max_age_s")
# (value as read, the foreign name for messages) -> engram's value, or SKIP to map nothing.
Convert = Callable[[Any, str], Any]
SKIP: Any = object()


@dataclass(frozen=True, slots=True)
class Rule:
    """Where one foreign key goes: engram's settings at ``targets``, through ``convert``."""

    targets: tuple[KeyPath, ...]
    convert: Convert | None = None
    # ClawCode's per-provider sub-blocks (``openai:``, ``gemini:``, ``local:``) count only for
    # the provider its ``embedding_provider`` names.
    provider: str | None = None


def to(*target: str, convert: Convert | None = None, provider: str | None = None) -> Rule:
    """A rule for one target: ``to("recall", "limit")``."""
    return Rule((target,), convert, provider)


# --- conversions ---------------------------------------------------------------------------------
_UNITS_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")
_DURATION_ALLOWED = "a number of seconds, or numbers with ms, s, m, h, d or w: 5s, 30m, 24h, 1h30m, 7d"


def _number(value: Any) -> float | None:
    """A finite number written as one (``5``, ``"2.5"``), else None."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value) if isinstance(value, int | float) else float(str(value).strip())
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def duration_s(value: Any, name: str) -> float:
    """``24h``, ``5s``, ``30m``, ``1h30m``, ``7d``, ``500ms`` or a plain number of seconds, as seconds.

    Raises ``ConfigError`` naming ``name`` for anything else (a negative value included)."""
    number = _number(value)
    text = str(value).strip().lower().replace(" ", "")
    if number is None and not isinstance(value, bool) and _DURATION.fullmatch(text):
        number = sum(float(amount) * _UNITS_S[unit] for amount, unit in _DURATION_PART.findall(text))
    if number is None or number < 0:
        raise ConfigError(f"{name}: {value!r} is not a duration (allowed: {_DURATION_ALLOWED})")
    return number


def _days(value: Any, name: str) -> float | None:
    """ClawCode's retention (``30d``, ``24h``, ``unlimited``; a plain number is days), in days."""
    if str(value).strip().lower() in ("unlimited", "none", "never", ""):
        return None
    number = _number(value)
    return number if number is not None and number >= 0 else duration_s(value, name) / 86400


def _ms_as_s(value: Any, name: str) -> float:
    number = _number(value)
    if number is None or number < 0:
        raise ConfigError(f"{name}: {value!r} is not a number of milliseconds")
    return number / 1000.0


def _ptrclaw_depth(value: Any, name: str) -> Any:
    """PtrClaw's ``enrich_depth``: any value above 0 follows links one hop (its
    ``collect_neighbors`` is a 1-hop traversal); engram's ``chat.enrich_depth`` counts hops."""
    number = _number(value)
    return 1 if number is not None and number > 0 and number == int(number) else value


# What PtrClaw's ``hygiene_max_age = 0`` becomes: the smallest age engram's own settings purge by
# (their 0 turns the purge off). PtrClaw's timestamps are whole seconds and it purges what is
# "older than" the age, so 0 takes every entry written before the current second.
PTRCLAW_NO_AGE_S = 1.0


def _ptrclaw_max_age(value: Any, name: str) -> Any:
    """PtrClaw's ``hygiene_max_age``: "Purge Conversation entries older than this (seconds)". Unlike
    ``recency_half_life`` and ``knowledge_max_idle_days`` its reference gives 0 no meaning of its
    own ("0 = disabled" for those two), so 0 is an age: every conversation entry is purged. Engram's
    ``max_age_s`` 0 means never, so PtrClaw's 0 is carried over as ``PTRCLAW_NO_AGE_S``, said once;
    it was read as engram's 0, keeping for ever what PtrClaw purged at every pass."""
    number = _number(value)
    if number != 0:
        return value  # (anything else: checked by engram's settings, named as its key)
    warn_once(name, "0 purges every conversation entry at each hygiene pass and after each history compaction, as "
              "PtrClaw does (entries older than 0 seconds); to keep them, set lifecycle.hygiene.max_age_s and "
              "history.compaction.conversation_max_age_s to 0, engram's own 'never'")
    return PTRCLAW_NO_AGE_S


def _text_or_skip(value: Any, name: str) -> Any:
    """PtrClaw's ``""`` means "not set": the default (or a fallback) applies."""
    return value if value != "" else SKIP


_warned: set[str] = set()


def warn_once(name: str, message: str) -> None:
    """Log ``name: message`` the first time this process meets it (settings are read several times)."""
    if name not in _warned:
        _warned.add(name)
        log.warning("%s: %s", name, message)


# The model the local provider bundles (engram.embed.local.RUNTIMES; named here, not imported, so
# reading settings never imports numpy).
_LOCAL_MODELS = ("all-minilm-l6-v2", "all-minilm-l6-v2-int8")


def _local_model_path(value: Any, name: str) -> Any:
    """ClawCode's ``local.model_path``: engram runs the copy of all-MiniLM-L6-v2 it is installed
    with, never a model from a folder; a path to that same model needs nothing, any other is reported."""
    if PurePath(str(value)).name.lower() not in _LOCAL_MODELS:
        warn_once(name, f"{value!r} is not loaded: engram's local provider runs only the all-MiniLM-L6-v2 it "
                  "is installed with (or set embeddings.provider to openai, gemini or ollama)")
    return SKIP


def _local_device(value: Any, name: str) -> Any:
    if str(value).strip().lower() != "cpu":
        warn_once(name, f"{value!r} is not used: engram's local model runs on the CPU")
    return SKIP


def _clawcode_min_relevance(value: Any, name: str) -> Any:
    """ClawCode's ``search.min_relevance`` is a floor on its own scores (70% cosine, 30% FTS, an
    obvious match near 0.9); engram's relevance is on another scale (the same match scores about
    0.3 with the local model), so its 0.6 would hide every result. Not applied; said once."""
    if _number(value) != 0:  # (0 would hide nothing: nothing to say)
        warn_once(name, f"{value!r} is not applied: it is a floor on ClawCode's relevance scores, and engram scores "
                        "on another scale (an obvious match scores about 0.3), so it would hide every result; set "
                        "recall.min_relevance in engram's terms for a floor (see docs/coming-from/clawcode.md)")
    return SKIP


def _transcripts_off(value: Any, name: str) -> Any:
    """ClawCode's ``transcript.enabled: false`` turns its automatic transcripts (and their indexing)
    off, whatever ``auto_index`` says; ``true`` leaves ``auto_index`` to decide."""
    return False if value is False else SKIP


# engram's home inside sclaw's ``data_dir``: engram's files (its database, the memory folder, the
# embedding cache, tokens, backups, transcripts) in a folder of their own, where sclaw's layout
# (``memory.db`` with its ``-wal``/``-shm``, ``agents/<agent>/memory.db``) has nothing, and on the
# same volume as the deployment's data, so what backs up or mounts ``data_dir`` carries them too.
SCLAW_HOME = "engram"


def _sclaw_database(value: Any, name: str) -> Any:
    """sclaw's ``memory.sqlite.path`` names sclaw's own database: engram keeps its own elsewhere.

    Taking it as engram's ``path`` either stopped every command (the file is sclaw's, refused by
    ``db.foreign.refuse_foreign``) or, before sclaw first ran, created engram's database where sclaw
    then opens its own."""
    warn_once(name, f"{value!r} is sclaw's database and is not opened as engram's: engram keeps its own (`path`, "
              f"else memory.db in its home, data_dir/{SCLAW_HOME} by default) and never changes sclaw's; "
              f"`engram import {value}` brings its facts and messages over")
    return SKIP


def _ptrclaw_database(value: Any, name: str) -> Any:
    """PtrClaw's ``memory.path`` with its SQLite backend names PtrClaw's own database (its schema,
    not engram's): as sclaw's, it is not taken as engram's ``path``. Taken, it stopped every command
    once PtrClaw had made the file (``db.foreign.refuse_foreign``) and, before, made engram's database
    where PtrClaw then opens its own. With ``"backend": "json"`` the file is shared as it is.
    ``""`` is PtrClaw's "auto" (its default file), no file of its named: nothing to say."""
    if value == "":
        return SKIP
    warn_once(name, f"{value!r} is PtrClaw's SQLite database and is not opened as engram's: engram keeps its own "
              f"(`path`, else memory.db in its home) and never changes PtrClaw's; `engram import {value}` brings "
              "its entries and links over")
    return SKIP


def _sclaw_home(value: Any, name: str) -> Any:
    """sclaw's ``data_dir`` -> engram's home, the folder ``SCLAW_HOME`` inside it; empty: none
    (sclaw then keeps no history, and engram its usual home)."""
    text = str(value).strip()
    return str(PurePath(text) / SCLAW_HOME) if text else SKIP


def _wal(value: Any, name: str) -> Any:
    if value is False:
        warn_once(name, "false is not followed: engram keeps SQLite in WAL mode, so readers never wait for "
                  "the writer and several processes can write one file without 'database is locked'")
    return SKIP


def clawless_history_unread(path: PurePath) -> None:
    """Said once, where a history read comes back empty: Clawless's ``conversation-history.jsonl``
    lies in engram's home (``AGENT_BRIDGE_HOME`` pointing at ``~/.clawless``) but the history in use
    is engram's own (``history.backend`` sqlite), so none of its exchanges are listed or recalled."""
    warn_once(str(path), "Clawless's conversation history is there but not read: engram's history is its own "
              "database (history.backend = sqlite), so it lists and recalls none of it. Bring it in once with "
              f"`engram import {path.parent} --from clawless`, or read and append to the file as it is with "
              "history.backend = \"jsonl\" (ENGRAM_HISTORY__BACKEND=jsonl)")


# --- the tables ----------------------------------------------------------------------------------
# Clawless's names (environment variables and config.json keys) -> engram's settings.
FOREIGN_CLAWLESS: dict[str, Rule] = {
    "CONVERSATION_HISTORY_ENABLED": to("history", "enabled"),
    "CONVERSATION_HISTORY_MAX_ENTRIES": to("history", "max_entries"),
    "CONVERSATION_HISTORY_MAX_CHARS_PER_ENTRY": to("history", "max_chars_per_entry"),
    "CONVERSATION_HISTORY_MAX_TOTAL_CHARS": to("history", "max_total_chars"),
    "CONVERSATION_HISTORY_RECAP_TOP_K": to("history", "recap_top_k"),
    "CONVERSATION_SEMANTIC_RECALL_ENABLED": to("history", "semantic"),
    "CONVERSATION_SEMANTIC_MAX_ENTRIES": to("history", "semantic_max_entries"),
    "CONVERSATION_SEMANTIC_MAX_CHARS_PER_ENTRY": to("history", "semantic_max_chars_per_entry"),
    "CONVERSATION_SEMANTIC_TIMEOUT_MS": to("embeddings", "timeout_s", convert=_ms_as_s),
    "MEMORY_MAX_CHARS": to("chat", "memory_max_chars"),
}

# Environment variables of PtrClaw and ClawCode (their config files are mapped below).
FOREIGN_ENV: dict[str, Rule] = {
    # PtrClaw: seconds, as its memory.recency_half_life.
    "MEMORY_RECENCY_HALF_LIFE": to("recall", "recency_half_life_s"),
    "EMBEDDING_PROVIDER": to("embeddings", "provider"),
    "EMBEDDING_MODEL": to("embeddings", "model"),
    "EMBEDDING_API_KEY": to("embeddings", "api_key"),
    # ClawCode's MCP launch entry ("env": {"MEMORY_DB_PATH": ...}): the database file.
    "MEMORY_DB_PATH": to("path"),
}

# The ``memory`` block of PtrClaw's config.json and of ClawCode's YAML -> engram's settings.
FOREIGN_MEMORY_BLOCK: dict[KeyPath, Rule] = {
    # PtrClaw (~/.ptrclaw/config.json)
    ("backend",): to("backend", convert=lambda v, _: {"json": "jsonfile", "none": "disabled"}.get(v, v)),
    ("path",): to("path"),
    ("auto_save",): to("chat", "auto_save"),
    ("recall_limit",): to("chat", "recall_limit"),
    ("enrich_depth",): to("chat", "enrich_depth", convert=_ptrclaw_depth),
    ("synthesis",): to("chat", "synthesis"),
    ("synthesis_interval",): to("chat", "synthesis_interval"),
    ("response_cache",): to("chat", "response_cache"),
    ("cache_ttl",): to("chat", "cache_ttl_s"),
    ("cache_max_entries",): to("chat", "cache_max_entries"),
    # PtrClaw purges old conversation entries in its hygiene pass and after a history compaction.
    ("hygiene_max_age",): Rule((("lifecycle", "hygiene", "max_age_s"),
                                ("history", "compaction", "conversation_max_age_s")), _ptrclaw_max_age),
    ("recency_half_life",): to("recall", "recency_half_life_s"),
    ("knowledge_max_idle_days",): to("lifecycle", "hygiene", "knowledge_max_idle_days"),
    ("knowledge_survival_chance",): to("lifecycle", "hygiene", "knowledge_survival_chance"),
    ("embeddings", "provider"): to("embeddings", "provider", convert=lambda v, _: v or "none"),
    ("embeddings", "model"): to("embeddings", "model", convert=lambda v, _: v or None),
    ("embeddings", "base_url"): to("embeddings", "base_url", convert=lambda v, _: v or None),
    ("embeddings", "api_key"): to("embeddings", "api_key", convert=_text_or_skip),
    ("embeddings", "text_weight"): to("recall", "text_weight"),
    ("embeddings", "vector_weight"): to("recall", "vector_weight"),
    # ClawCode (memory: in its YAML)
    ("embedding_provider",): to("embeddings", "provider"),
    ("openai", "model"): to("embeddings", "model", provider="openai"),
    ("openai", "api_key"): to("embeddings", "api_key", convert=_text_or_skip, provider="openai"),
    ("gemini", "model"): to("embeddings", "model", provider="gemini"),
    ("gemini", "api_key"): to("embeddings", "api_key", convert=_text_or_skip, provider="gemini"),
    ("local", "model_path"): Rule((), _local_model_path, provider="local"),
    ("local", "device"): Rule((), _local_device, provider="local"),
    ("database", "path"): to("path"),
    ("database", "backup_enabled"): to("lifecycle", "backup", "enabled"),
    ("database", "backup_interval"): to("lifecycle", "schedule", "backup_s", convert=duration_s),
    ("search", "vector_weight"): to("recall", "vector_weight"),
    ("search", "fts_weight"): to("recall", "text_weight"),
    ("search", "min_relevance"): Rule((), _clawcode_min_relevance),
    ("search", "max_results"): to("recall", "limit"),
    ("file_sync", "enabled"): to("files", "enabled"),
    ("file_sync", "directory"): to("files", "dir"),
    ("file_sync", "format"): to("files", "format"),
    ("file_sync", "watch_interval"): to("files", "poll_interval_s", convert=duration_s),
    # Before auto_index: transcripts off wins over auto_index on (the first value put stays).
    ("transcript", "enabled"): to("history", "transcript_auto_index", convert=_transcripts_off),
    ("transcript", "auto_index"): to("history", "transcript_auto_index"),
    ("transcript", "importance_threshold"): to("history", "transcript_importance_threshold"),
    ("retention", "session_memories"): to("lifecycle", "retention", "session_days", convert=_days),
    ("retention", "agent_memories"): to("lifecycle", "retention", "agent_days", convert=_days),
    ("retention", "global_memories"): to("lifecycle", "retention", "global_days", convert=_days),
}

# The ``agent`` block of PtrClaw's config.json -> engram's settings: the limits its history compaction
# reads ("History size exceeds max_history_messages", "75% of token_limit").
FOREIGN_PTRCLAW_AGENT: dict[KeyPath, Rule] = {
    ("max_history_messages",): to("history", "compaction", "max_history_messages"),
    ("token_limit",): to("history", "compaction", "token_limit"),
}

# PtrClaw's uint32 settings whose 0 turns a feature off, where engram's setting starts at 1: 0 is
# read as the feature's switch instead. ``maybe_synthesize`` returns at once for a
# ``synthesis_interval`` of 0 (no turn is counted, so none is synthesised before a compaction
# either), and a cache of 0 entries evicts each answer as it is put.
PTRCLAW_ZERO_IS_OFF: dict[KeyPath, KeyPath] = {
    ("synthesis_interval",): ("chat", "synthesis"),
    ("cache_max_entries",): ("chat", "response_cache"),
}

# sclaw's ``modules: memory.sqlite:`` block -> engram's settings.
FOREIGN_SCLAW_SQLITE: dict[str, Rule] = {
    "path": Rule((), _sclaw_database),
    "busy_timeout": to("busy_timeout_ms"),
    "wal": Rule((), _wal),
}


# --- mapping -------------------------------------------------------------------------------------
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value: Any, name: str, env: Mapping[str, str]) -> Any:
    """``value`` with each ``${VAR}`` replaced by the variable's value (strings only).

    Raises ``ConfigError`` naming ``name`` when a variable is not set."""
    if not isinstance(value, str) or "${" not in value:
        return value

    def one(match: re.Match[str]) -> str:
        variable = match.group(1)
        if variable not in env:
            raise ConfigError(f"{name}: {match.group(0)} names an environment variable that is not set "
                              f"(set {variable}, or write the value itself)")
        return env[variable]

    return _VARIABLE.sub(one, value)


Origins = dict[KeyPath, str]  # engram's setting -> the foreign key (or variable) its value came from


def _put(tree: dict[str, Any], path: KeyPath, value: Any, name: str, origins: Origins | None) -> None:
    for part in path[:-1]:
        tree = tree.setdefault(part, {})
    if path[-1] not in tree:  # what is already there (engram's own key) wins
        tree[path[-1]] = value
        if origins is not None:
            origins[path] = name


def _apply(rule: Rule, value: Any, name: str, into: dict[str, Any], env: Mapping[str, str] | None,
           origins: Origins | None = None) -> None:
    """Map one foreign value; ``env`` given: it came from a file, so ``${VAR}`` is expanded."""
    if env is not None:
        value = expand(value, name, env)
    if rule.convert is not None:
        value = rule.convert(value, name)
    if value is SKIP:
        return
    for target in rule.targets:
        _put(into, target, value, name, origins)


def _at(tree: Any, path: KeyPath) -> Any:
    for part in path:
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def map_variables(values: Mapping[str, Any], into: dict[str, Any], *, env: Mapping[str, str] | None = None,
                  tables: tuple[dict[str, Rule], ...] = (FOREIGN_CLAWLESS,), origins: Origins | None = None) -> None:
    """Names of ``tables`` found in ``values`` (the environment, or a file's top level when
    ``env`` is given for ``${VAR}``) mapped into ``into``; empty or blank values count as unset
    (as ``ENGRAM_*`` ones do)."""
    for table in tables:
        for name, rule in table.items():
            value = values.get(name)
            if value is not None and not (isinstance(value, str) and not value.strip()):
                _apply(rule, values[name], name, into, env, origins)


def map_sclaw(document: dict[str, Any], into: dict[str, Any], agent: str, env: Mapping[str, str],
              origins: Origins | None = None) -> None:
    """sclaw's YAML: ``modules: {memory.sqlite: {...}}``, ``data_dir`` (engram's home is its
    ``SCLAW_HOME`` folder) and ``agents: {<agent>: {memory: {enabled}}}`` (memory off for this
    agent: the disabled backend, and its conversation history off)."""
    modules = document.get("modules")
    module = modules.get("memory.sqlite") if isinstance(modules, dict) else None
    if isinstance(module, dict):
        for key, rule in FOREIGN_SCLAW_SQLITE.items():
            if module.get(key) not in (None, ""):
                _apply(rule, module[key], f"modules.memory.sqlite.{key}", into, env, origins)
    if document.get("data_dir"):
        _apply(to("home", convert=_sclaw_home), document["data_dir"], "data_dir", into, env, origins)
    # Each level is read only when it is a mapping, as ``modules`` is: another system's file may use
    # ``agents`` for something else, and must not stop engram from starting.
    agents = document.get("agents")
    entry = agents.get(agent) if isinstance(agents, dict) else None
    memory = entry.get("memory") if isinstance(entry, dict) else None
    if isinstance(memory, dict) and memory.get("enabled") is False:
        # sclaw's switch is "memory (history persistence)": its conversations are not kept either.
        _put(into, ("backend",), "disabled", f"agents.{agent}.memory.enabled", origins)
        _put(into, ("history", "enabled"), False, f"agents.{agent}.memory.enabled", origins)


def map_memory_block(document: dict[str, Any], into: dict[str, Any], env: Mapping[str, str],
                     origins: Origins | None = None) -> None:
    """The ``memory`` block (PtrClaw's or ClawCode's), then PtrClaw's OpenAI key fallback."""
    block = document.get("memory")
    if not isinstance(block, dict):
        return
    provider = str(block.get("embedding_provider") or "").strip().lower()
    # PtrClaw's backend when the block names none is SQLite ("sqlite if compiled with SQLite support").
    ptrclaw_sqlite = str(block.get("backend") or "sqlite").strip().lower() != "json"
    # Before the loop: the switch a 0 gives wins over the block's own (``"synthesis": true``).
    off = [source for source in PTRCLAW_ZERO_IS_OFF if _at(block, source) == 0 and _at(block, source) is not False]
    for source in off:
        _apply(to(*PTRCLAW_ZERO_IS_OFF[source]), False, "memory." + ".".join(source), into, env, origins)
    for source, rule in FOREIGN_MEMORY_BLOCK.items():
        value = _at(block, source)
        if value is None or isinstance(value, dict) or rule.provider not in (None, provider) or source in off:
            continue
        if source == ("path",) and ptrclaw_sqlite:
            rule = Rule((), _ptrclaw_database)
        _apply(rule, value, "memory." + ".".join(source), into, env, origins)
    # PtrClaw: "embeddings.api_key ... Empty falls back to providers.openai.api_key".
    if str(_at(block, ("embeddings", "provider")) or "").strip().lower() == "openai":
        key = _at(document, ("providers", "openai", "api_key"))
        if key is not None:
            _apply(to("embeddings", "api_key", convert=_text_or_skip), key, "providers.openai.api_key", into, env,
                   origins)


def map_ptrclaw_agent_block(document: dict[str, Any], into: dict[str, Any], env: Mapping[str, str],
                            origins: Origins | None = None) -> None:
    """PtrClaw's ``agent`` block (a table; engram's own ``agent`` is a name): its history limits."""
    block = document.get("agent")
    if not isinstance(block, dict):
        return
    for source, rule in FOREIGN_PTRCLAW_AGENT.items():
        value = _at(block, source)
        if value is not None:
            _apply(rule, value, "agent." + ".".join(source), into, env, origins)


# --- mem0's Memory.from_config -------------------------------------------------------------------
# The sections of mem0's ``MemoryConfig`` that have nothing to map onto: engram keeps its memories,
# vectors and versions in its own store. Each is named in a warning (once) and left aside, so a
# mem0 application's config works after the changed import.
MEM0_IGNORED: dict[str, str] = {
    "vector_store": "engram keeps memories and their vectors in its own store (set `backend`, `path` or "
                    "`database_url` beside it)",
    "graph_store": "engram links memories in its own store; no graph database is used",
    "history_db_path": "engram keeps each memory's versions in its own store (`history` reads them)",
    "reranker": "engram's recall is the ranking (`rerank=True` changes nothing)",
    "version": "the facade answers in mem0's v1.1 shape ({\"results\": [...]})",
    "custom_fact_extraction_prompt": "engram's extractors use their own prompt",
    "custom_update_memory_prompt": "engram's extractors use their own prompt",
    "custom_instructions": "engram's extractors use their own prompt",
}
# mem0's embedder providers engram has one for (mem0's ``huggingface`` runs a local
# sentence-transformers model: engram's local provider, its bundled all-MiniLM-L6-v2).
MEM0_EMBEDDERS = {"openai": "openai", "ollama": "ollama", "gemini": "gemini", "huggingface": "local"}
MEM0_LLMS = {"openai": "openai", "ollama": "ollama", "anthropic": "anthropic", "gemini": "gemini", "vllm": "vllm"}
# A provider section's ``config`` keys -> engram's (in ``embeddings`` / ``llm``); the others are named
# in a warning as not used. mem0 names each provider's address after it (``ollama_base_url``...).
_MEM0_EMBEDDER_KEYS = {"model": "model", "api_key": "api_key", "embedding_dims": "dims",
                       "output_dimensionality": "dims", "openai_base_url": "base_url", "ollama_base_url": "base_url"}
_MEM0_LLM_KEYS = {"model": "model", "api_key": "api_key", "temperature": "temperature", "max_tokens": "max_tokens",
                  "openai_base_url": "base_url", "ollama_base_url": "base_url", "vllm_base_url": "base_url"}

# What applies instead of a section naming a provider engram has not.
_MEM0_FALLBACK = {"embeddings": "engram's own `embeddings` settings apply",
                  "llm": "the facade's add(infer=True) extracts facts with engram's rules"}


def _mem0_section(config: Mapping[str, Any], name: str) -> tuple[str, dict[str, Any]] | None:
    """(provider, its config) of mem0's ``embedder`` or ``llm`` section; None when it is engram's own
    ``llm`` setting (provider, model... at its top, no ``config``)."""
    section = config[name]
    if not isinstance(section, Mapping) or not set(section) <= {"provider", "config"}:
        if name == "llm" and isinstance(section, Mapping):
            return None
        raise ConfigError(f"{name}: {section!r} is not a mem0 {name} section "
                          f"(allowed: {{\"provider\": \"openai\", \"config\": {{\"model\": ...}}}})")
    given = section.get("config") or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"{name}.config: {given!r} is not a mapping (allowed: the provider's settings, "
                          "{\"model\": ..., \"api_key\": ...})")
    provider = section.get("provider") or "openai"  # mem0's default for both
    return str(provider).strip().lower(), dict(given)


def _mem0_provider(config: Mapping[str, Any], name: str, providers: Mapping[str, str], keys: Mapping[str, str],
                   into: dict[str, Any], target: str) -> bool:
    """Map mem0's ``name`` section onto engram's ``target`` settings; whether it was mapped."""
    found = _mem0_section(config, name)
    if found is None:
        return False
    provider, given = found
    if target in into:
        warn_once(name, f"mem0's section is not used: the config's own `{target}` setting is")
        return False
    if provider not in providers:
        warn_once(f"{name}.provider", f"{provider!r} is not used: engram has no such provider (it has "
                  f"{', '.join(sorted(providers))}); " + _MEM0_FALLBACK[target])
        return False
    mapped: dict[str, Any] = {"provider": providers[provider]}
    for key, value in given.items():
        if key in keys and value is not None:
            mapped.setdefault(keys[key], value)
        elif value is not None:
            warn_once(f"{name}.config.{key}", "is not used by engram")
    if provider == "huggingface":
        model = mapped.pop("model", None)
        if model is not None:
            _local_model_path(model, f"{name}.config.model")
        for key in ("base_url", "dims"):
            mapped.pop(key, None)
    if target == "llm" and provider == "ollama" and mapped.get("base_url"):
        # mem0 names Ollama's root (http://localhost:11434); engram speaks its OpenAI-compatible /v1 API.
        url = str(mapped["base_url"]).rstrip("/")
        mapped["base_url"] = url if url.endswith("/v1") else url + "/v1"
    for key, value in mapped.items():
        _put(into, (target, key), value, f"{name}.config.{key}", None)
    return True


def map_mem0_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """mem0's ``Memory.from_config`` dict as engram settings, and whether it names an LLM (the
    facade then extracts facts with it, as mem0 does on every ``add``).

    ``embedder`` -> ``embeddings`` and ``llm`` -> ``llm`` for the providers engram has (openai,
    ollama, gemini, huggingface as engram's local model; openai, anthropic, gemini, ollama, vllm);
    ``vector_store``, ``graph_store``, ``history_db_path`` and the others of ``MEM0_IGNORED`` are left
    aside with a warning naming each. Other keys are engram's settings, passed on as they are
    (``path``, ``backend``...), and win over a mapped value. Only what the config names is mapped:
    without an ``embedder`` or ``llm`` section engram's own settings apply, so nothing leaves the
    machine unless the config asks for it."""
    from engram.config import Settings  # here: engram.config imports this module

    # A misspelt mem0 key ("verison") is neither mem0's nor engram's: engram.config refuses it by
    # the nearest of engram's settings alone, which a mem0 config's author would not recognise.
    mem0_keys = [*MEM0_IGNORED, "embedder", "llm"]
    for key in config:
        if key not in mem0_keys and key not in Settings.model_fields:
            close = difflib.get_close_matches(str(key), [*mem0_keys, *Settings.model_fields], n=1)
            if close and close[0] in mem0_keys:  # (nearer one of engram's: engram.config names it)
                raise ConfigError(f"invalid settings ({key}: not a setting engram or mem0 knows (did you mean {close[0]!r}?))")
    # Copied a level down: a mapped value goes into engram's own sections, never the caller's dicts.
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in config.items()
           if k not in MEM0_IGNORED and k != "embedder"}
    for key in MEM0_IGNORED:
        if key in config:
            warn_once(key, f"mem0's setting is not used: {MEM0_IGNORED[key]}")
    if "embedder" in config:
        _mem0_provider(config, "embedder", MEM0_EMBEDDERS, _MEM0_EMBEDDER_KEYS, out, "embeddings")
    uses_llm = False
    if "llm" in config:
        engram_llm = _mem0_section(config, "llm") is None
        if not engram_llm:
            del out["llm"]  # mem0's shape: mapped below
        uses_llm = engram_llm or _mem0_provider(config, "llm", MEM0_LLMS, _MEM0_LLM_KEYS, out, "llm")
    return out, uses_llm
