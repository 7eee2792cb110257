"""``engram mcp install``: the entry an MCP client needs to launch ``engram mcp``, merged into its
configuration file.

Each client keeps stdio servers in a JSON object under one key of its config file: ``mcpServers``
(Claude Desktop, Claude Code, Cursor, Windsurf) or ``servers`` (VS Code, whose entries also carry
``"type": "stdio"``). Installing sets that one entry and leaves every other server and every other
setting in the file as it was; a file that is not valid JSON is refused, untouched, with its line
named. The file is replaced atomically (written beside it, then renamed) so a client reading it
never sees half of it.

The launcher must work from any directory and any shell: the absolute path of the installed
``engram`` command (this process's own script, else the one on PATH), or ``uvx`` running the
published distribution. ``ENGRAM_HOME`` is pinned in the entry's environment so the client's
engram opens the same store as the shell that installed it.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engram import jsondoc
from engram.errors import ConfigError, ValidationError


@dataclass(frozen=True, slots=True)
class Client:
    name: str
    key: str  # the object holding servers in its config file
    stdio_type: bool  # entries carry "type": "stdio"
    user_path: tuple[str, str, str]  # relative to (macOS, Windows %APPDATA% or home, Linux) roots
    project_path: str | None  # relative to the project folder, for --project


CLIENTS: dict[str, Client] = {c.name: c for c in (
    Client("claude-desktop", "mcpServers", False,
           ("~/Library/Application Support/Claude/claude_desktop_config.json",
            "%APPDATA%/Claude/claude_desktop_config.json", "~/.config/Claude/claude_desktop_config.json"), None),
    Client("claude-code", "mcpServers", True, ("~/.claude.json",) * 3, ".mcp.json"),
    Client("cursor", "mcpServers", False, ("~/.cursor/mcp.json",) * 3, ".cursor/mcp.json"),
    Client("windsurf", "mcpServers", False, ("~/.codeium/windsurf/mcp_config.json",) * 3, None),
    Client("vscode", "servers", True,
           ("~/Library/Application Support/Code/User/mcp.json", "%APPDATA%/Code/User/mcp.json",
            "~/.config/Code/User/mcp.json"), ".vscode/mcp.json"),
)}

Launcher = Literal["command", "uvx"]


@dataclass(frozen=True, slots=True)
class Installed:
    client: str
    path: Path
    name: str
    entry: dict[str, Any]
    action: Literal["added", "updated", "unchanged"]


def config_path(client: str, *, project: Path | None = None) -> Path:
    """Where ``client`` keeps its MCP servers: its user-wide file, or the project's with ``project``."""
    spec = _client(client)
    if project is not None:
        if spec.project_path is None:
            raise ValidationError("project", f"{client} has no project configuration file",
                                  [c.name for c in CLIENTS.values() if c.project_path])
        return project / spec.project_path
    system = platform.system()
    raw = spec.user_path[0 if system == "Darwin" else 1 if system == "Windows" else 2]
    if raw.startswith("%APPDATA%"):
        raw = raw.replace("%APPDATA%", os.environ.get("APPDATA", str(Path.home() / "AppData" / "Roaming")))
    return Path(os.path.expanduser(raw))


def launcher(kind: Launcher = "command") -> tuple[str, list[str]]:
    """The command and leading arguments that start engram from anywhere."""
    if kind == "uvx":
        return "uvx", ["--from", f"{_distribution()}[local,server]", "engram"]
    # The engram running now, never another one found on PATH: a user who ran ``.venv/bin/python -m
    # engram mcp install`` (or that virtualenv's script) expects the client to launch that same
    # install, with its version and extras, not whichever ``engram`` an older PATH entry holds.
    own = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if own is not None and own.name in ("engram", "engram.exe") and own.exists():
        return str(own.resolve()), []
    # Not run as the script (``python -m engram``): this interpreter, which has engram installed, by
    # the path it was started as: a virtualenv's python is a link, and resolved it is the base
    # interpreter, which has neither engram nor the packages it needs.
    return os.path.abspath(sys.executable), ["-m", "engram"]


def entry(client: str, *, agent: str, home: Path, kind: Launcher = "command",
          tools: str | None = None, config: Path | None = None) -> dict[str, Any]:
    """The server entry; ``config``: engram's config file (``--config``), pinned as an absolute
    path so the client reads the same file from any directory."""
    command, lead = launcher(kind)
    env = {"ENGRAM_HOME": str(home.expanduser().resolve())}
    if tools:
        env["ENGRAM_SERVER__MCP_TOOLS"] = tools
    pinned = [] if config is None else ["--config", str(config.expanduser().resolve())]
    out: dict[str, Any] = {"type": "stdio"} if _client(client).stdio_type else {}
    out.update(command=command, args=[*lead, *pinned, "--agent", agent, "mcp"], env=env)
    return out


def install(client: str, path: Path, name: str, server: Mapping[str, Any]) -> Installed:
    """Merge ``server`` as ``name`` into the config file at ``path`` (created when missing)."""
    spec = _client(client)
    document = _load(path)
    servers = document.setdefault(spec.key, {})
    if not isinstance(servers, dict):
        raise ValidationError(f"{path}: {spec.key}", f"is a {type(servers).__name__}", "a JSON object of servers")
    before = servers.get(name)
    action: Literal["added", "updated", "unchanged"] = (
        "added" if before is None else "unchanged" if before == dict(server) else "updated")
    if action != "unchanged":
        servers[name] = dict(server)
        _write(path, document)
    return Installed(client, path, name, dict(server), action)


def command_line(server: Mapping[str, Any]) -> str:
    """The entry's command as one shell line, exactly what the client will run: quoted, since the
    uvx launcher's ``engram-recall[local,server]`` is a glob pattern to zsh."""
    return shlex.join([server["command"], *server["args"]])


def snippet(client: str, name: str, server: Mapping[str, Any]) -> str:
    """What ``--print`` shows: the fragment to merge into the client's file by hand."""
    return json.dumps({_client(client).key: {name: dict(server)}}, indent=2)


def _client(name: str) -> Client:
    if name not in CLIENTS:
        raise ValidationError("client", f"unknown client {jsondoc.shown(name)}", list(CLIENTS))
    return CLIENTS[name]


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(str(path), f"is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}); "
                              "left unchanged", "a JSON object") from None
    if not isinstance(data, dict):
        raise ValidationError(str(path), f"holds a JSON {type(data).__name__}; left unchanged", "a JSON object")
    return data


def _write(path: Path, document: Mapping[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.engram-tmp")
        temporary.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        if path.exists():
            shutil.copymode(path, temporary)  # ~/.claude.json is private (0600): keep it so
        os.replace(temporary, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc}") from exc


def _distribution() -> str:
    """The published distribution that provides the ``engram`` package (what uvx installs)."""
    from importlib.metadata import packages_distributions

    names = packages_distributions().get("engram") or ["engram"]
    return names[0]
