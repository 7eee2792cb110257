"""Settings: explicit arguments > environment > config file > defaults; clear errors."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from engram.config import Settings, load_settings
from engram.engine import Engram
from engram.errors import ConfigError, ValidationError


def test_defaults(isolated_home: Path) -> None:
    settings = load_settings()
    assert settings.home == isolated_home
    assert settings.backend == "sqlite"
    assert settings.database_path() == isolated_home / "memory.db"
    assert settings.recall.text_weight == 0.5 and settings.recall.vector_weight == 0.5


def test_environment_beats_file_beats_defaults(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text('backend = "jsonfile"\nagent = "filer"\n[recall]\ntext_weight = 0.3\n')
    settings = load_settings()
    assert (settings.backend, settings.agent, settings.recall.text_weight) == ("jsonfile", "filer", 0.3)
    monkeypatch.setenv("ENGRAM_AGENT", "envy")
    monkeypatch.setenv("ENGRAM_RECALL__TEXT_WEIGHT", "0.2")
    settings = load_settings()
    assert (settings.backend, settings.agent, settings.recall.text_weight) == ("jsonfile", "envy", 0.2)
    assert load_settings(agent="explicit").agent == "explicit"


def test_per_agent_databases(isolated_home: Path) -> None:
    settings = load_settings(per_agent_databases=True)
    assert settings.database_path("bob") == isolated_home / "agents" / "bob" / "memory.db"
    # One folder per agent on every file system: capitals as !x, ':' as '+' (engram.disk_names).
    assert settings.database_path("Bob") == isolated_home / "agents" / "!bob" / "memory.db"
    assert settings.database_path("adk:app:u1") == isolated_home / "agents" / "adk+app+u1" / "memory.db"
    with Engram.from_settings(settings) as mem:
        mem.remember("hello")
    assert (isolated_home / "agents" / "default" / "memory.db").exists()


def test_bad_settings_name_the_setting(monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    monkeypatch.setenv("ENGRAM_RECALL__TEXT_WEIGHT", "heavy")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "recall.text_weight" in str(err.value)


def test_a_recall_limit_no_recall_accepts_is_refused_at_start_up(isolated_home: Path) -> None:
    # A recall asks for at most 100; a larger default used to fail every recall left without a limit.
    with pytest.raises(ConfigError) as err:
        load_settings(recall={"limit": 500})
    assert "recall.limit" in str(err.value) and "100" in str(err.value)
    assert load_settings(recall={"limit": 100}).recall.limit == 100


def test_malformed_config_file_is_reported(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("backend = [unclosed")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "config.toml" in str(err.value)


def test_unknown_backend_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        Engram.from_settings(backend="cassandra")
    assert "sqlite" in str(err.value) and "cassandra" in str(err.value)


def test_home_given_as_an_argument_reads_that_homes_config_file(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import subprocess
    import sys

    from engram.config import load_settings

    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "elsewhere"))
    home = tmp_path / "h"
    home.mkdir()
    custom = tmp_path / "custom.db"
    (home / "config.toml").write_text(f'agent = "zed"\npath = "{custom}"\n', encoding="utf-8")
    assert load_settings(home=home).agent == "zed"
    shown = subprocess.run([sys.executable, "-m", "engram", "--home", str(home), "--json", "stats"],
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert str(custom) in shown.stdout


def test_a_backend_chosen_explicitly_wins_over_a_postgresql_url(monkeypatch) -> None:  # noqa: ANN001
    from engram.config import load_settings

    monkeypatch.setenv("ENGRAM_DATABASE_URL", "postgresql://someone@localhost/db")
    monkeypatch.delenv("ENGRAM_BACKEND", raising=False)
    assert load_settings().backend == "postgres"  # the URL alone switches
    assert load_settings(backend="sqlite").backend == "sqlite"  # --backend sqlite is kept


@pytest.mark.parametrize(("url", "said"), [
    ("mysql://engram:s3cret@db/engram", 'database_url: a "mysql" URL is not a PostgreSQL database (allowed: '
                                        "postgresql://user:password@host:port/database"),
    ("sqlite:///memories.db", 'database_url: a "sqlite" URL is not a PostgreSQL database'),
    ("engram.example.com", "database_url: not a PostgreSQL URL (allowed: postgresql://"),
])
def test_a_database_url_naming_no_postgresql_database_is_refused(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 url: str, said: str) -> None:
    # It used to be ignored: the memories went to home/memory.db while the user believed them shared.
    monkeypatch.setenv("ENGRAM_DATABASE_URL", url)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert said in str(err.value) and "(from ENGRAM_DATABASE_URL)" in str(err.value), str(err.value)
    assert "s3cret" not in str(err.value)
    assert not (isolated_home / "memory.db").exists()


def test_a_libpq_key_value_database_url_selects_postgresql(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_DATABASE_URL", "host=db.example.com dbname=engram user=engram")
    assert load_settings().backend == "postgres"


def test_a_config_file_named_by_engram_config_must_exist(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A mistyped ENGRAM_CONFIG used to run on the defaults without a word.
    monkeypatch.setenv("ENGRAM_CONFIG", str(isolated_home / "confg.toml"))
    with pytest.raises(ConfigError, match=r"confg\.toml does not exist \(named by --config or ENGRAM_CONFIG\)"):
        load_settings()
    (isolated_home / "confg.toml").parent.mkdir(parents=True, exist_ok=True)
    (isolated_home / "confg.toml").write_text('backend = "jsonfile"\n')
    assert load_settings().backend == "jsonfile"


@pytest.mark.parametrize(("text", "env", "named"), [
    # ClawCode's YAML and sclaw's: the key the user wrote comes first, engram's setting after it.
    ("memory:\n  search:\n    max_results: ten\n", {}, "memory.search.max_results (recall.limit): "),
    ("modules:\n  memory.sqlite:\n    busy_timeout: 5s\n", {}, "modules.memory.sqlite.busy_timeout (busy_timeout_ms): "),
    # Clawless's variable, which ranks above the file's own key.
    ("recall:\n  limit: 5\n", {"CONVERSATION_HISTORY_MAX_ENTRIES": "many"},
     "CONVERSATION_HISTORY_MAX_ENTRIES (history.max_entries): "),
    # A source above the mapped key gave the refused value: engram's own name is the one to fix.
    ("memory:\n  search:\n    max_results: 5\n", {"ENGRAM_RECALL__LIMIT": "eleven"}, "(recall.limit: "),
    ("recall:\n  limit: zz\nmemory:\n  search:\n    max_results: 5\n", {}, "(recall.limit: "),
])
def test_a_refused_value_is_named_by_the_key_it_was_written_as(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, env: dict[str, str], named: str) -> None:
    config = tmp_path / "their.yaml"
    config.write_text(text, encoding="utf-8")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        load_settings(config=config)
    assert named in str(err.value), str(err.value)


def test_a_refused_value_says_where_it_was_set(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the setting was named: with a config file, variables and arguments in play, the user had
    # to guess which one held the bad value.
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text('[recall]\nfusion = "best"\n', encoding="utf-8")
    monkeypatch.setenv("ENGRAM_RECALL__LIMIT", "many")
    with pytest.raises(ConfigError) as err:
        load_settings(recall={"min_relevance": 7})
    text = str(err.value)
    assert "recall.limit: Input should be a valid integer" in text and "(from ENGRAM_RECALL__LIMIT)" in text, text
    # A value outside a setting's choices in the words every door uses (spelt as JSON), not pydantic's
    # "Input should be 'weighted' or 'rrf'".
    assert ('recall.fusion: unknown fusion "best" (allowed: weighted, rrf) '
            f"(from config file {isolated_home / 'config.toml'})") in text, text
    # A number out of range names the whole range, as the engine's refusals do, not pydantic's
    # "Input should be less than or equal to 1".
    assert "recall.min_relevance: 7 is out of range (allowed: a number from 0 to 1) (from an argument)" in text, text


@pytest.mark.parametrize(("low", "high", "whole", "words"), [
    (1, 100, True, "1 to 100"),
    (0, 2147483647, True, "0 to 2147483647"),  # a real limit (busy_timeout_ms's), however large, is named
    (1, 2**63 - 2, True, "1 to 9223372036854775806"),
    (1, 2**63 - 1, True, "1 or more"),  # SQLite's largest integer is no limit a person meets
    (1, 2**64, True, "1 or more"),
    (-(2**63), 5, True, "at most 5"),
    (0, float("inf"), False, "a number, 0 or more"),
    (0, 1, False, "a number from 0 to 1"),
    (-(2**63), 2**63 - 1, True, "any whole number"),
])
def test_range_words_read_a_storage_limit_as_no_bound(low: float, high: float, whole: bool, words: str) -> None:
    from engram.model import range_words

    assert range_words(low, high, whole=whole) == words


@pytest.mark.parametrize(("toml", "refused", "variable", "bad", "good", "read"), [
    ('[time]\nzone = "Moon/Base"\n',
     'time.zone: unknown time zone "Moon/Base" (allowed: an IANA name such as Europe/Berlin)',
     "ENGRAM_TIME__ZONE", "../../etc/passwd", "Europe/Berlin", lambda s: s.time.zone),
    ('backend = "mongo"\n',
     'backend: unknown memory backend "mongo" (allowed: disabled, inmemory, jsonfile, postgres, sqlite)',
     "ENGRAM_BACKEND", "lmdb", "inmemory", lambda s: s.backend),
])
def test_an_unknown_zone_or_backend_is_refused_as_the_settings_are_read_saying_where(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch, toml: str, refused: str, variable: str, bad: str,
        good: str, read) -> None:
    # Each was checked only later (the zone when the time reader was built, the backend when the
    # store opened): the refusal named the setting but not where it was set, unlike every other's.
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert f"{refused} (from config file {isolated_home / 'config.toml'})" in str(err.value), str(err.value)
    monkeypatch.setenv(variable, bad)
    with pytest.raises(ConfigError, match=rf'"{re.escape(bad)}" .*\(from {variable}\)'):
        load_settings()
    monkeypatch.setenv(variable, good)
    assert read(load_settings()) == good


def test_a_busy_timeout_sqlite_cannot_hold_is_refused(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SQLite keeps busy_timeout in a 32-bit int: 2147483648 and above read back as 0, so a writer
    # meant to wait for ever failed at once with "database is locked".
    monkeypatch.setenv("ENGRAM_BUSY_TIMEOUT_MS", "2147483648")
    with pytest.raises(ConfigError, match=r"busy_timeout_ms: 2147483648 is out of range \(allowed: 0 to 2147483647\) "
                                          r"\(from ENGRAM_BUSY_TIMEOUT_MS\)"):
        load_settings()
    monkeypatch.setenv("ENGRAM_BUSY_TIMEOUT_MS", "2147483647")
    with Engram.from_settings() as mem:
        mem.remember("waits as long as SQLite can")
        assert mem.store.db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 2147483647


def test_a_variable_that_is_not_the_json_of_a_list_setting_is_named(isolated_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # pydantic-settings said `error parsing value for field "privacy" from source "EnvSettingsSource"`,
    # and engram blamed the config file (one that did not exist) for it.
    monkeypatch.setenv("ENGRAM_PRIVACY__PII", "redact")
    monkeypatch.setenv("ENGRAM_PRIVACY__KINDS", "email")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == ('invalid settings (privacy.kinds: "email" is not JSON (allowed: JSON for a list or table '
                              'setting, e.g. ["a", "b"] or {"key": 1}) (from ENGRAM_PRIVACY__KINDS))'), str(err.value)
    monkeypatch.setenv("ENGRAM_PRIVACY__KINDS", '["email"]')
    assert load_settings().privacy.kinds == ["email"]
    monkeypatch.setenv("ENGRAM_LIFECYCLE", "{not json")
    with pytest.raises(ConfigError,
                       match=r'^invalid settings \(lifecycle: "\{not json" is not JSON .*\(from ENGRAM_LIFECYCLE\)\)$'):
        load_settings()


def test_a_list_item_refused_is_named_by_its_setting_and_index(isolated_home: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Read "privacy.kinds.0: unknown 0 "passport"": the index was taken for the setting's name.
    monkeypatch.setenv("ENGRAM_PRIVACY__KINDS", '["email", "passport"]')
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert ('privacy.kinds[1]: unknown kinds "passport" (allowed: email, phone, card, api_key, iban, ssn) '
            "(from ENGRAM_PRIVACY__KINDS)") in str(err.value), str(err.value)


def test_the_command_line_names_the_foreign_key_and_exits_4(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    config = tmp_path / "sclaw.yaml"
    config.write_text("modules:\n  memory.sqlite:\n    busy_timeout: 5s\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    done = subprocess.run([sys.executable, "-m", "engram", "--home", str(tmp_path / "home"), "--config", str(config),
                           "stats"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 4, done.stderr
    assert "modules.memory.sqlite.busy_timeout (busy_timeout_ms): Input should be a valid integer" in done.stderr


def test_an_empty_engram_home_is_the_default_home_not_the_current_folder(tmp_path: Path) -> None:
    # A compose file or script passing on a variable it does not have gives ENGRAM_HOME= : that
    # used to put memory.db in whatever folder the command ran in (the CLI and the library alike).
    import os
    import subprocess
    import sys

    here = tmp_path / "cwd"
    here.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(tmp_path / "user"), ENGRAM_HOME="", ENGRAM_PATH="", ENGRAM_FILES__DIR="")
    done = subprocess.run([sys.executable, "-m", "engram", "--json", "stats"], capture_output=True, text=True,
                          env=env, cwd=here, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f'"location": "{tmp_path / "user" / ".engram" / "memory.db"}"' in done.stdout
    assert list(here.iterdir()) == []


def test_an_empty_variable_counts_as_unset(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolated_home.mkdir(parents=True)
    key_file = isolated_home / "key"
    key_file.write_text("from the file\n")
    (isolated_home / "config.toml").write_text(f'backend = "jsonfile"\n[privacy]\nencryption_key_file = "{key_file}"\n')
    monkeypatch.setenv("ENGRAM_BACKEND", "")
    monkeypatch.setenv("ENGRAM_PRIVACY__ENCRYPTION_KEY", "")  # did hide the key file: the store opened in clear
    settings = load_settings()
    assert settings.backend == "jsonfile"
    assert settings.privacy.key() == "from the file"


@pytest.mark.parametrize("blank", ["  ", "\t", " \n"])
def test_a_blank_variable_counts_as_unset_as_an_empty_one_does(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path, blank: str) -> None:
    # ENGRAM_HOME='  ' or ENGRAM_PATH='  ' kept the store in a folder or file named by the spaces in the
    # current folder; ENGRAM_AGENT/SESSION/BACKEND/DATABASE_URL/RECALL__LIMIT='  ' and ENGRAM_CONFIG='  '
    # were refused as values, where an empty one is unset.
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text('backend = "jsonfile"\nagent = "filer"\n[recall]\nlimit = 7\n')
    monkeypatch.chdir(tmp_path / "engram-home")
    for name in ("ENGRAM_PATH", "ENGRAM_AGENT", "ENGRAM_SESSION", "ENGRAM_BACKEND", "ENGRAM_DATABASE_URL",
                 "ENGRAM_CONFIG", "ENGRAM_PER_AGENT_DATABASES", "ENGRAM_RECALL__LIMIT", "ENGRAM_RECALL",
                 "ENGRAM_PRIVACY__KINDS", "ENGRAM_EMBEDDINGS__PROVIDER", "AGENT_BRIDGE_HOME"):
        monkeypatch.setenv(name, blank)
    settings = load_settings()
    assert (settings.backend, settings.agent, settings.session, settings.path) == ("jsonfile", "filer", None, None)
    assert (settings.database_url, settings.per_agent_databases, settings.recall.limit) == (None, False, 7)
    assert settings.embeddings.provider == "auto" and settings.database_path() == isolated_home / "memory.json"
    # A blank home is unset too: the default home (HOME's .engram), not a folder named by the blank.
    monkeypatch.setenv("ENGRAM_HOME", blank)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert load_settings().home == tmp_path / "user" / ".engram"
    assert sorted(p.name for p in (tmp_path / "engram-home").iterdir()) == ["config.toml"]


def test_an_empty_provider_is_none_in_a_file_or_argument_but_unset_in_the_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/embeddings.md: `provider = ""` means no embedder; `ENGRAM_EMBEDDINGS__PROVIDER=` is unset, like every
    empty ENGRAM_ variable (a compose file passing on a variable it lacks must not turn vectors off)."""
    from engram.embed import create_embedder

    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "")
    assert load_settings().embeddings.provider == "auto"
    assert load_settings(embeddings={"provider": ""}).embeddings.provider == ""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text('[embeddings]\nprovider = ""\n')
    from_file = load_settings().embeddings  # the empty variable leaves the file's value
    assert from_file.provider == "" and create_embedder(from_file) is None
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")  # how the environment turns vectors off
    (isolated_home / "config.toml").write_text('[embeddings]\nprovider = "auto"\n')
    assert load_settings().embeddings.provider == "none"


@pytest.mark.parametrize("blank", ['""', '"   "'])
def test_a_blank_encryption_key_is_refused_naming_it(isolated_home: Path, blank: str) -> None:
    # It used to open the file in clear while the memory folder was turned off as for a key.
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(f"[privacy]\nencryption_key = {blank}\n")
    with pytest.raises(ConfigError, match=r"privacy\.encryption_key: is empty: give a key, or leave it unset"):
        load_settings()


def test_a_mistyped_setting_is_named_with_a_suggestion(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from engram import foreign_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    config.write_text('backend = "sqlite"\ntext_wieght = 0.5\n[recal]\nlimit = 5\n[recall]\nfuzion = "rrf"\n'
                      'text_weight = 0.3\n[history]\nenabeld = true\n')
    settings = load_settings()
    assert settings.recall.text_weight == 0.3 and settings.recall.fusion == "weighted"
    assert [r.getMessage() for r in caplog.records] == [
        # A section's setting written at the top is suggested by its dotted name.
        f"{config}: text_wieght: not a setting engram knows, ignored (did you mean 'recall.text_weight'?)",
        f"{config}: recal: not a setting engram knows, ignored (did you mean 'recall'?)",
        f"{config}: recall.fuzion: not a setting engram knows, ignored (did you mean 'fusion'?)",
        f"{config}: history.enabeld: not a setting engram knows, ignored (did you mean 'enabled'?)",
    ]


def test_another_systems_own_keys_are_not_called_mistyped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from engram import foreign_settings

    monkeypatch.setattr(foreign_settings, "_warned", set())
    caplog.set_level(logging.WARNING, logger="engram.config")
    config = tmp_path / "sclaw.yaml"
    config.write_text("name: bot\nchannels:\n  telegram: {}\nmodules:\n  memory.sqlite:\n    busy_timeout: 5000\n")
    assert load_settings(config=config, home=tmp_path / "home").busy_timeout_ms == 5000
    other = tmp_path / "other.json"
    other.write_text('{"provider": "anthropic", "channels": {}}')
    load_settings(config=other, home=tmp_path / "home")
    assert caplog.records == []


def test_a_mistyped_argument_is_refused_naming_it_with_a_suggestion(isolated_home: Path) -> None:
    # An argument is engram's alone: ignored, from_settings(agnet="alice") stored in agent "default".
    with pytest.raises(ConfigError) as err:
        Engram.from_settings(agnet="alice", recall={"limt": 3, "fusion": "rrf"})
    assert str(err.value) == ("invalid settings (agnet: not a setting engram knows (did you mean 'agent'?);"
                              " recall.limt: not a setting engram knows (did you mean 'limit'?))")
    assert not (isolated_home / "memory.db").exists()  # refused before anything was opened
    from engram.compat.mem0 import Memory

    with pytest.raises(ConfigError, match=r"backnd: not a setting engram knows \(did you mean 'backend'\?\)"):
        Memory.from_config({"backnd": "inmemory"})
    assert load_settings(agent="alice", recall={"limit": 3}).agent == "alice"


def test_keyword_settings_beside_a_settings_object_are_refused(isolated_home: Path) -> None:
    # Dropped, from_settings(settings, agent="bob") opened the settings' agent ("default").
    settings = load_settings()
    with pytest.raises(ConfigError, match=r"^invalid settings \(agent: given beside a Settings object"):
        Engram.from_settings(settings, agent="bob")
    with Engram.from_settings(settings, agent=None) as mem:  # None is "not given", as for load_settings
        assert mem.settings.agent == "default"


@pytest.mark.parametrize("value", ["inf", "nan"])
@pytest.mark.parametrize("variable, setting", [
    ("ENGRAM_SERVER__MAINTENANCE_INTERVAL_S", "server.maintenance_interval_s"),
    ("ENGRAM_FILES__POLL_INTERVAL_S", "files.poll_interval_s"),
])
def test_an_infinite_wait_interval_is_refused_at_start_up(isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                          variable: str, setting: str, value: str) -> None:
    # Accepted, it reached a wait's timeout: `engram serve`'s maintenance thread and `engram watch`'s
    # watcher died with "OverflowError: timestamp out of range for platform time_t". Refused by the
    # sections' shared base (``SettingsSection``), which these fields no longer repeat.
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert f"{setting}: Input should be a finite number (from {variable})" in str(err.value), str(err.value)


@pytest.mark.parametrize("variable, value, setting", [
    ("ENGRAM_RECALL__MIN_RELEVANCE", "nan", "recall.min_relevance"),
    ("ENGRAM_LIFECYCLE__CONSOLIDATION__THRESHOLD", "nan", "lifecycle.consolidation.threshold"),
    ("ENGRAM_LLM__TEMPERATURE", "NaN", "llm.temperature"),  # a float or None
    ("ENGRAM_LIFECYCLE__SCHEDULE__BACKUP_S", "inf", "lifecycle.schedule.backup_s"),  # bounded below only
    ("ENGRAM_LIFECYCLE__RETENTION__AGENT_DAYS", "-inf", "lifecycle.retention.agent_days"),
])
def test_nan_and_inf_in_a_float_setting_are_refused_as_not_finite_naming_the_variable(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, setting: str) -> None:
    # nan failed the first bound it met ("Input should be less than or equal to 1", as if a number
    # out of range) and inf passed a lower bound (a job never due, a memory never old).
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == f"invalid settings ({setting}: Input should be a finite number (from {variable}))"


def test_nan_in_the_config_file_or_an_argument_is_refused_naming_where(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    config.write_text("[recall]\nmin_relevance = nan\n[lifecycle.decay]\nmin_age_days = inf\n")  # TOML's own nan, inf
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == (f"invalid settings (recall.min_relevance: Input should be a finite number (from config file"
                              f" {config}); lifecycle.decay.min_age_days: Input should be a finite number (from config"
                              f" file {config}))")
    config.unlink()
    with pytest.raises(ConfigError, match=r"^invalid settings \(recall\.min_relevance: Input should be a finite number"
                                          r" \(from an argument\)\)$"):
        load_settings(recall={"min_relevance": float("nan")})
    assert load_settings(recall={"min_relevance": 0.25}).recall.min_relevance == 0.25


@pytest.mark.parametrize("variable, value, setting", [("ENGRAM_AGENT", "a/b", "agent"), ("ENGRAM_SESSION", "x y", "session")])
def test_an_agent_or_session_name_set_in_the_environment_is_refused_naming_the_variable(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, setting: str) -> None:
    # The engine refused it naming only "agent", where every other setting's refusal says where it was set.
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value) == (f'invalid settings ({setting}: "{value}" is not a valid name (allowed: letters, digits'
                              f" and . _ : @ -, 1-128 chars) (from {variable}))")
    assert load_settings(**{setting: "fine"}).model_dump()[setting] == "fine"  # an argument's name wins over it


def test_an_agent_name_from_the_config_file_names_the_file_and_one_given_as_an_argument_stays_the_engines(
        isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    config.write_text('agent = "a/b"\n')
    with pytest.raises(ConfigError, match=rf'^invalid settings \(agent: "a/b" is not a valid name .* \(from config file'
                                          rf" {re.escape(str(config))}\)\)$"):
        load_settings()
    config.unlink()
    # Given as an argument, the engine refuses it as its caller named it (a ValidationError of agent).
    with pytest.raises(ValidationError, match=r'^agent: "a b" is not a valid name'):
        Engram.from_settings(agent="a b", embeddings={"provider": "none"})


def test_every_settings_section_refuses_nan_and_inf() -> None:
    # One rule (engram.settings_section) rather than one per field: a section added later is
    # covered only if it derives from SettingsSection, which this walk checks.
    from pydantic import BaseModel

    from engram.settings_section import SettingsSection

    def sections(model: type[BaseModel]) -> list[type[BaseModel]]:
        found = []
        for info in model.model_fields.values():
            for kind in (info.annotation, *typing.get_args(info.annotation)):
                if isinstance(kind, type) and issubclass(kind, BaseModel):
                    found += [kind, *sections(kind)]
        return found

    every = sections(Settings)
    assert len(every) >= 20
    assert [s.__name__ for s in every if not issubclass(s, SettingsSection)] == []
    assert Settings.model_config["allow_inf_nan"] is False
