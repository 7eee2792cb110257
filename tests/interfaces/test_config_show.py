"""``engram config show``: every setting engram runs with and where it came from, secrets never
printed, nothing made on disk. Through the real entry point in a subprocess, as a user runs it.

Review: a user pointing engram at their PtrClaw ``config.json`` could not confirm what was read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram.config import describe_settings
from engram.config_report import NOT_SET, SET

SECRETS = {"ENGRAM_LLM__API_KEY": "sk-llm-secret-4711", "ENGRAM_PRIVACY__ENCRYPTION_KEY": "encryption-secret-0815",
           "ENGRAM_DATABASE_URL": "postgresql://engram:db-password-42@db.internal:5432/engram",
           "ENGRAM_LLM__BASE_URL": "https://proxy-user:proxy-password-99@llm.internal/v1"}


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(home), **env)
    done = subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, env=full, timeout=120)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def _shown(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_own_config_file_variables_options_and_secrets_in_a_new_home(tmp_path: Path) -> None:
    home = tmp_path / "home"  # does not exist: a pure read must not make it
    config = tmp_path / "engram.toml"
    config.write_text('[recall]\nlimit = 7\n[embeddings]\nprovider = "none"\n', encoding="utf-8")
    done = run(home, "--config", str(config), "--agent", "alice", "config", "show", "--json",
               ENGRAM_RECALL__MIN_RELEVANCE="0.25", **SECRETS)
    shown = _shown(done)
    settings = shown["settings"]
    assert shown["config_file"] == str(config) and shown["config_file_exists"] is True
    assert settings["recall.limit"] == {"value": 7, "from": f"{config}: recall.limit", "kind": "config file",
                                        "changed": True, "secret": False}
    assert (settings["recall.min_relevance"]["value"], settings["recall.min_relevance"]["from"]) == (
        0.25, "ENGRAM_RECALL__MIN_RELEVANCE")
    assert (settings["agent"]["value"], settings["agent"]["from"]) == ("alice", "--agent")
    assert (settings["recall.fusion"]["value"], settings["recall.fusion"]["from"]) == ("weighted", "default")
    assert settings["recall.fusion"]["changed"] is False
    # Secrets: only whether they are set; a URL's password masked; what engram set itself named.
    for name in ("llm.api_key", "privacy.encryption_key", "database_url"):
        assert (settings[name]["value"], settings[name]["secret"]) == (SET, True), name
    assert (settings["embeddings.api_key"]["value"], settings["embeddings.api_key"]["from"]) == (NOT_SET, "default")
    assert settings["llm.base_url"]["value"] == "https://proxy-user:***@llm.internal/v1"
    assert (settings["backend"]["value"], settings["backend"]["kind"]) == ("postgres", "derived")
    assert (settings["files.enabled"]["value"], settings["files.enabled"]["kind"]) == (False, "derived")
    assert len(settings) > 150  # every setting, not only the ones given
    for secret in ("sk-llm-secret-4711", "encryption-secret-0815", "db-password-42", "proxy-password-99"):
        assert secret not in done.stdout and secret not in done.stderr
    assert not home.exists()
    # The table says the same, secrets kept out too.
    table = run(home, "--config", str(config), "config", "show", ENGRAM_RECALL__MIN_RELEVANCE="0.25", **SECRETS)
    assert table.returncode == 0, table.stderr
    assert any("recall.min_relevance" in line and "ENGRAM_RECALL__MIN_RELEVANCE" in line for line in table.stdout.splitlines())
    for secret in ("sk-llm-secret-4711", "encryption-secret-0815", "db-password-42", "proxy-password-99"):
        assert secret not in table.stdout and secret not in table.stderr
    assert not home.exists()


PTRCLAW = {
    "provider": "anthropic",
    "providers": {"openai": {"api_key": "sk-ptrclaw-openai-secret"}},
    "memory": {"backend": "json", "path": "", "recall_limit": 3, "recency_half_life": 3600,
               "embeddings": {"provider": "openai", "model": "text-embedding-3-small", "api_key": ""}},
}


def test_a_ptrclaw_config_json_says_which_key_gave_each_setting(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps(PTRCLAW), encoding="utf-8")
    config = str(home / "config.json")
    done = run(home, "--json", "config", "show", "--changed", EMBEDDING_MODEL="text-embedding-3-large")
    settings = _shown(done)["settings"]
    translated = "(another system's key, translated)"
    assert settings["backend"]["value"] == "jsonfile"
    assert settings["backend"]["from"] == f"{config}: memory.backend {translated}"
    assert settings["chat.recall_limit"]["from"] == f"{config}: memory.recall_limit {translated}"
    assert settings["recall.recency_half_life_s"]["value"] == 3600
    # PtrClaw's "path": "" is its "auto": the file used is the JSON backend's in the home, shown so, not "none".
    assert settings["path"] == {"value": str(home / "memory.json"), "kind": "config file", "changed": True,
                                "secret": False, "from": f"{config}: memory.path {translated}: empty, so the"
                                                         " jsonfile backend's file in the home"}
    # PtrClaw's key falls back to providers.openai.api_key, as PtrClaw has it: named, never shown.
    assert settings["embeddings.api_key"] == {"value": SET, "from": f"{config}: providers.openai.api_key {translated}",
                                              "kind": "config file", "changed": True, "secret": True}
    # engram's variables of its own come first; the file's memory.embeddings.model is below EMBEDDING_MODEL.
    assert (settings["embeddings.model"]["value"], settings["embeddings.model"]["from"]) == (
        "text-embedding-3-large", "EMBEDDING_MODEL (another system's variable, translated)")
    assert "recall.fusion" not in settings  # --changed: only what was given
    assert "sk-ptrclaw-openai-secret" not in done.stdout + done.stderr
    assert _files(home) == ["config.json"]  # nothing made beside it

    table = run(home, "config", "show")
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith(f"config file: {config}\n")
    assert any("chat.recall_limit" in line and "memory.recall_limit" in line for line in table.stdout.splitlines())
    path_row = next(line for line in table.stdout.splitlines() if line.split("│")[1:2] == [" path" + " " * 40])
    assert str(home / "memory.json") in path_row and "none" not in path_row, path_row
    assert "sk-ptrclaw-openai-secret" not in table.stdout + table.stderr
    assert _files(home) == ["config.json"]


@pytest.mark.parametrize(("env", "used", "why"), [
    ({}, "memory.db", "default: not set, so the sqlite backend's file in the home"),
    ({"ENGRAM_PER_AGENT_DATABASES": "true"}, "agents/bob/memory.db",
     "default: not set, so agent bob's own file (per_agent_databases)"),
])
def test_path_not_set_shows_the_file_used(tmp_path: Path, env: dict[str, str], used: str, why: str) -> None:
    home = tmp_path / "home"
    shown = _shown(run(home, "--agent", "bob", "--json", "config", "show", **env))["settings"]["path"]
    assert (shown["value"], shown["from"]) == (str(home / used), why)
    assert shown["changed"] is False  # a default still: --changed leaves it out
    assert _shown(run(home, "--json", "config", "show", ENGRAM_BACKEND="inmemory"))["settings"]["path"]["value"] is None
    assert not home.exists()


def test_bad_config_still_exits_4_naming_the_setting_and_makes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run(home, "config", "show", ENGRAM_RECALL__LIMIT="plenty")
    assert done.returncode == 4, done.stdout
    assert "recall.limit" in done.stderr and "ENGRAM_RECALL__LIMIT" in done.stderr
    assert done.stdout == "" and not home.exists()


@pytest.mark.parametrize("given", ["--home", "AGENT_BRIDGE_HOME"])
def test_the_home_says_where_it_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str) -> None:
    # Library door: the same report without the CLI (an argument is named by its setting there).
    home = tmp_path / "elsewhere"
    monkeypatch.delenv("ENGRAM_HOME")
    if given == "--home":
        report = describe_settings(home=home)
        expected = "argument home"
    else:
        monkeypatch.setenv("AGENT_BRIDGE_HOME", str(home))
        report = describe_settings()
        expected = "AGENT_BRIDGE_HOME (another system's variable, translated)"
    described = {setting.name: setting for setting in report.settings}
    assert (described["home"].value, str(described["home"].source)) == (str(home), expected)
    assert report.config_file == home / "config.toml" and report.config_file_exists is False
    assert not home.exists()


def test_a_key_from_the_providers_own_variable_is_named_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    # engram uses OPENAI_API_KEY / ANTHROPIC_API_KEY when its own key is unset: "(not set)" would mislead.
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "openai")
    monkeypatch.setenv("ENGRAM_LLM__PROVIDER", "anthropic")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-openai-variable")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-anthropic-variable")
    described = {s.name: s for s in describe_settings().settings}
    assert (described["embeddings.api_key"].value, str(described["embeddings.api_key"].source)) == (SET, "OPENAI_API_KEY")
    assert (described["llm.api_key"].value, str(described["llm.api_key"].source)) == (SET, "ANTHROPIC_API_KEY")
    shown = json.dumps(describe_settings().as_dict())
    assert "sk-from-openai-variable" not in shown and "sk-from-anthropic-variable" not in shown


def test_every_setting_named_like_a_secret_is_reported_as_one() -> None:
    # A secret added later (a token, a password) is kept out without anyone remembering to: a name
    # like a secret's must be one, or be a URL (its password masked) or a file's path.
    described = describe_settings().settings
    words = ("key", "password", "secret", "token", "url")
    secret_like = [s for s in described if any(word in s.name.rsplit(".", 1)[-1] for word in words)]
    not_secret = {s.name for s in secret_like if not s.secret}
    assert not_secret <= {"embeddings.base_url", "llm.base_url", "privacy.encryption_key_file",
                          "history.compaction.token_limit", "history.compaction.token_threshold", "llm.max_tokens",
                          "chat.inject_max_tokens", "server.print_token"}, not_secret
    assert {"embeddings.api_key", "llm.api_key", "privacy.encryption_key", "database_url"} <= {
        s.name for s in described if s.secret}
    assert all(s.value in (SET, NOT_SET) for s in described if s.secret)


def test_clawcode_yaml_and_clawless_variables_are_named_by_their_own_keys(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("yaml")
    config = tmp_path / "clawcode.yaml"
    config.write_text("memory:\n  embedding_provider: openai\n  openai:\n    api_key: ${CLAWCODE_KEY}\n"
                      "  search:\n    max_results: 8\n", encoding="utf-8")
    monkeypatch.setenv("CLAWCODE_KEY", "sk-clawcode-secret-1234")
    monkeypatch.setenv("CONVERSATION_HISTORY_MAX_ENTRIES", "50")
    report = describe_settings(config=config)
    described = {s.name: (s.value, str(s.source)) for s in report.changed()}
    translated = "(another system's key, translated)"
    assert described == {
        "home": (os.environ["ENGRAM_HOME"], "ENGRAM_HOME"),  # (the test's own home, as every test's)
        "recall.limit": (8, f"{config}: memory.search.max_results {translated}"),
        "embeddings.provider": ("openai", f"{config}: memory.embedding_provider {translated}"),
        "embeddings.api_key": (SET, f"{config}: memory.openai.api_key {translated}"),
        "history.max_entries": (50, "CONVERSATION_HISTORY_MAX_ENTRIES (another system's variable, translated)"),
    }
    assert "sk-clawcode-secret-1234" not in json.dumps(report.as_dict())


def test_an_unlimited_retention_reads_as_the_word_a_config_file_takes(tmp_path: Path) -> None:
    # None (no limit) printed "none", which reads as "not set" and is no value the config file takes
    # (TOML has no null); "unlimited" is, in the table and in --json alike.
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[lifecycle.retention]\nagent_days = "unlimited"\n', encoding="utf-8")
    settings = _shown(run(home, "--json", "config", "show"))["settings"]
    assert (settings["lifecycle.retention.agent_days"]["value"], settings["lifecycle.retention.agent_days"]["kind"]) == (
        "unlimited", "config file")
    # The default, unlimited too, is no change (the word is compared with the word, not with None).
    assert settings["lifecycle.retention.global_days"] == {"value": "unlimited", "from": "default", "kind": "default",
                                                           "changed": False, "secret": False}
    assert settings["lifecycle.retention.session_days"]["value"] == 30
    table = run(home, "config", "show", COLUMNS="200")
    assert table.returncode == 0, table.stderr
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in table.stdout.splitlines() if line.count("│") >= 3}
    assert (rows["lifecycle.retention.agent_days"], rows["lifecycle.retention.global_days"]) == ("unlimited", "unlimited")
    # What is shown is what the config file takes back: written there, it reads the same.
    (home / "config.toml").write_text(f'[lifecycle.retention]\nagent_days = "{rows["lifecycle.retention.global_days"]}"\n',
                                      encoding="utf-8")
    assert describe_settings(home=home).as_dict()["settings"]["lifecycle.retention.agent_days"]["value"] == "unlimited"
