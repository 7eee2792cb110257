"""``engram mcp install``: each client's file format, merged into a config that holds other servers,
and the written command answering MCP ``tools/list`` when launched from a fresh shell elsewhere."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from engram.interfaces.mcp.install import CLIENTS, config_path
from tests.interfaces.test_mcp import CLAWLESS, PTRCLAW

ENGRAM = str(Path(sys.executable).with_name("engram"))  # the installed command, as a user runs it
CLIENT_KEYS = {"claude-desktop": "mcpServers", "claude-code": "mcpServers", "cursor": "mcpServers",
               "windsurf": "mcpServers", "vscode": "servers"}


def engram(home: Path, *args: str, cwd: Path | None = None, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([ENGRAM, "--home", str(home), *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)
    assert done.returncode == code, done.stderr + done.stdout
    return done


def existing_config(key: str) -> dict[str, Any]:
    return {key: {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}},
            "theme": "dark", "inputs": [{"id": "api-key", "type": "promptString"}]}


def tools_from(entry: dict[str, Any], cwd: Path) -> set[str]:
    # A fresh shell somewhere else: only the client's entry and a bare PATH without any virtualenv.
    params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                   env={**entry.get("env", {}), "PATH": "/usr/bin:/bin"}, cwd=cwd)

    async def run() -> set[str]:
        async with Client(params) as client:
            return {t.name for t in (await client.list_tools()).tools}

    return asyncio.run(run())


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_install_merges_into_each_clients_format(tmp_path: Path, client: str) -> None:
    home, config = tmp_path / "home", tmp_path / "conf" / "client.json"
    key = CLIENT_KEYS[client]
    config.parent.mkdir()
    config.write_text(json.dumps(existing_config(key)), encoding="utf-8")
    out = json.loads(engram(home, "--agent", "assistant", "--json", "mcp", "install", "--client", client,
                            "--config", str(config)).stdout)
    assert out["action"] == "added"
    written = json.loads(config.read_text())
    before = existing_config(key)
    assert written[key]["filesystem"] == before[key]["filesystem"]  # other servers untouched
    assert (written["theme"], written["inputs"]) == (before["theme"], before["inputs"])
    entry = written[key]["engram"]
    assert entry["args"][-3:] == ["--agent", "assistant", "mcp"] and Path(entry["command"]).is_absolute()
    assert entry["env"] == {"ENGRAM_HOME": str(home.resolve())}
    assert ("type" in entry) == (client in ("claude-code", "vscode"))
    again = json.loads(engram(home, "--agent", "assistant", "--json", "mcp", "install", "--client", client,
                              "--config", str(config)).stdout)
    assert again["action"] == "unchanged" and json.loads(config.read_text()) == written


def test_the_written_command_answers_tools_list_from_a_fresh_shell(tmp_path: Path) -> None:
    home, config, elsewhere = tmp_path / "home", tmp_path / "claude_desktop_config.json", tmp_path / "elsewhere"
    elsewhere.mkdir()
    engram(home, "--agent", "assistant", "mcp", "install", "--client", "claude-desktop", "--config", str(config))
    entry = json.loads(config.read_text())["mcpServers"]["engram"]
    assert {"remember", "recall", "forget", "link", "get"} <= tools_from(entry, elsewhere)


def test_print_writes_nothing_and_project_scope_and_a_broken_file_is_left_alone(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    printed = json.loads(engram(home, "mcp", "install", "--client", "vscode", "--print", cwd=project).stdout)
    assert printed["servers"]["engram"]["type"] == "stdio" and not (project / ".vscode").exists()
    engram(home, "mcp", "install", "--client", "cursor", "--project", cwd=project)
    assert "engram" in json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"a": 1,}\n', encoding="utf-8")
    failed = engram(home, "mcp", "install", "--client", "cursor", "--config", str(broken), code=2)
    assert "line 1" in failed.stderr and "left unchanged" in failed.stderr
    assert broken.read_text() == '{"mcpServers": {"a": 1,}\n'
    assert "unknown client" in engram(home, "mcp", "install", "--client", "emacs", code=2).stderr
    uvx = json.loads(engram(home, "mcp", "install", "--client", "cursor", "--launcher", "uvx", "--print").stdout)
    assert uvx["mcpServers"]["engram"]["command"] == "uvx"


def test_default_locations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("platform.system", lambda: "Linux")
    assert config_path("claude-code") == tmp_path / ".claude.json"
    assert config_path("cursor") == tmp_path / ".cursor" / "mcp.json"
    assert config_path("claude-desktop") == tmp_path / ".config" / "Claude" / "claude_desktop_config.json"
    assert config_path("vscode", project=tmp_path / "p") == tmp_path / "p" / ".vscode" / "mcp.json"
    monkeypatch.setattr("platform.system", lambda: "Darwin")
    assert config_path("claude-desktop") == (
        tmp_path / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json")


def test_the_printed_command_is_the_written_one(tmp_path: Path) -> None:
    # The uvx entry runs 'engram-recall[local,server]': the line printed after installing is that
    # command, shell-quoted (brackets are a glob to zsh) and on one line however narrow the terminal.
    home, config = tmp_path / "home", tmp_path / "my.json"
    done = subprocess.run([ENGRAM, "--home", str(home), "mcp", "install", "--client", "claude-code", "--config",
                           str(config), "--launcher", "uvx", "--name", "memory"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "40"})
    assert done.returncode == 0, done.stderr
    entry = json.loads(config.read_text())["mcpServers"]["memory"]
    assert entry["command"] == "uvx" and entry["args"][1].endswith("[local,server]")
    printed = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("uvx")]
    assert [shlex.split(line) for line in printed] == [[entry["command"], *entry["args"]]]


def test_a_config_file_given_with_config_is_pinned_in_the_entry(tmp_path: Path) -> None:
    # `engram --config FILE mcp install`: the client launches engram with the same file.
    home, client_file, elsewhere = tmp_path / "home", tmp_path / "claude_desktop_config.json", tmp_path / "elsewhere"
    elsewhere.mkdir()
    settings = tmp_path / "settings" / "engram.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"server": {"mcp_tools": "ptrclaw"}}))
    engram(home, "--config", str(settings), "--agent", "assistant", "mcp", "install", "--client", "claude-desktop",
           "--config", str(client_file), cwd=tmp_path)
    entry = json.loads(client_file.read_text())["mcpServers"]["engram"]
    assert entry["args"][-5:] == ["--config", str(settings.resolve()), "--agent", "assistant", "mcp"]
    # PtrClaw's family, as the pinned file says, and Clawless's semantic_recall offered beside either
    assert tools_from(entry, elsewhere) == PTRCLAW | CLAWLESS


def test_run_as_python_m_engram_from_a_virtualenv_the_entry_keeps_its_interpreter(tmp_path: Path) -> None:
    # No engram script on PATH (a virtualenv not activated: .venv/bin/python -m engram mcp install): the entry
    # runs this interpreter by the path it was started as. Resolved, a virtualenv's python (a link) became the
    # base interpreter it links to, which has neither engram nor its packages: the client's server died at once.
    home, config, elsewhere = tmp_path / "home", tmp_path / "claude_desktop_config.json", tmp_path / "elsewhere"
    elsewhere.mkdir()
    source = Path(__file__).resolve().parents[2] / "src"
    done = subprocess.run([sys.executable, "-m", "engram", "--home", str(home), "--agent", "assistant", "mcp", "install",
                           "--client", "claude-desktop", "--config", str(config)], capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(source), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr + done.stdout
    entry = json.loads(config.read_text())["mcpServers"]["engram"]
    assert (entry["command"], entry["args"][:2]) == (os.path.abspath(sys.executable), ["-m", "engram"])
    assert {"remember", "recall", "forget"} <= tools_from(entry, elsewhere)


@pytest.mark.parametrize("how", ["script", "python -m"])
def test_the_entry_launches_the_engram_that_ran_install_not_another_on_path(tmp_path: Path, how: str) -> None:
    # Another engram earlier on PATH (an older install, a pipx one): `.venv/bin/python -m engram mcp install`
    # wrote that one into the client's config, so the client launched an engram the user never ran.
    home, config, elsewhere, other = (tmp_path / "home", tmp_path / "client.json", tmp_path / "elsewhere",
                                      tmp_path / "other-bin")
    elsewhere.mkdir()
    other.mkdir()
    (other / "engram").write_text("#!/bin/sh\necho 'not this engram' >&2; exit 3\n")
    (other / "engram").chmod(0o755)
    source = Path(__file__).resolve().parents[2] / "src"
    start = [ENGRAM] if how == "script" else [sys.executable, "-m", "engram"]
    done = subprocess.run([*start, "--home", str(home), "--agent", "assistant", "mcp", "install", "--client", "cursor",
                           "--config", str(config)], capture_output=True, text=True, timeout=300,
                          env={"PATH": f"{other}:/usr/bin:/bin", "PYTHONPATH": str(source), "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr + done.stdout
    entry = json.loads(config.read_text())["mcpServers"]["engram"]
    assert not entry["command"].startswith(str(other))
    expected = (str(Path(ENGRAM).resolve()), []) if how == "script" else (os.path.abspath(sys.executable), ["-m", "engram"])
    assert (entry["command"], entry["args"][:len(expected[1])]) == expected
    assert {"remember", "recall", "forget"} <= tools_from(entry, elsewhere)
