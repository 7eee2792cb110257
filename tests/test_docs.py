"""The documentation tells the truth: every CLI command, setting, HTTP route and MCP tool is
explained in README.md or docs/, and every example in README.md (and the shell examples of getting
started and privacy) runs."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import sqlite3
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from pydantic import BaseModel

from engram.config import Settings, load_settings
from engram.interfaces.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
# What a reader can find: the landing page and the hand-written pages (the generated reference
# pages list everything by construction, so they do not count as explaining it).
DOCS = README + "".join(p.read_text() for p in sorted((ROOT / "docs").rglob("*.md")))


def _cli_commands() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return set(group.commands)  # type: ignore[attr-defined]


def test_every_cli_command_is_documented() -> None:
    missing = [c for c in _cli_commands() if not re.search(rf"engram {re.escape(c)}\b", DOCS)]
    assert not missing, f"not in README.md or docs/: {', '.join(f'engram {c}' for c in sorted(missing))}"


def test_every_import_option_is_in_the_cli_page() -> None:
    """docs/cli.md's table of `engram import` names each of its options, as the command takes them."""
    import typer.main

    command = typer.main.get_command(app).commands["import"]  # type: ignore[attr-defined]
    page = (ROOT / "docs" / "cli.md").read_text()
    missing = sorted(o for o in _options(command) - {"--help"} if f"| `{o}" not in page)
    assert _options(command) - {"--help"} and not missing, f"engram import options not in docs/cli.md: {missing}"


def _options(command: object) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)  # type: ignore[attr-defined]
            if name.startswith("-")} | {"--help"}


def _engram_invocations(text: str) -> list[list[str]]:
    """The words after `engram` in every shell example and inline `engram ...` of a page."""
    snippets = [re.sub(r"\s+#.*$", "", line) for block in re.findall(r"```bash\n(.*?)```", text, re.S)
                for line in block.splitlines()]
    snippets += re.findall(r"`(engram [^`]+)`", text)
    found = []
    for snippet in snippets:
        for part in re.split(r"&&|\||;| / | -> ", snippet):
            match = re.search(r"(?:^|\s)(?:\./|\.venv/bin/)?engram(\s.+)$", part.strip())
            if match:
                try:
                    found.append(shlex.split(match.group(1)))
                except ValueError:
                    continue
    return found


def test_every_documented_cli_option_exists() -> None:
    """Each `--option` an example or an inline `engram ...` gives its command is one that command
    takes (global options before the command; `--json` after it too, as the CLI allows)."""
    import typer.main

    group = typer.main.get_command(app)
    global_options = {name: param for param in group.params for name in (*param.opts, *param.secondary_opts)}
    wrong, checked = [], 0
    for page in ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))]:
        for words in _engram_invocations((ROOT / page).read_text()):
            command, path, i = group, ["engram"], 0
            while i < len(words):
                word = words[i]
                if command is group and word in global_options:
                    option = global_options[word]
                    i += 1 if option.is_flag or option.count else 2  # type: ignore[attr-defined]
                    continue
                if re.fullmatch(r"--?[a-z][a-z0-9-]*", word.split("=")[0]):
                    checked += 1
                    if word.split("=")[0] not in _options(command) | {"--json"}:
                        wrong.append(f"{page}: `{' '.join(path)}` has no {word} (engram {' '.join(words)})")
                elif hasattr(command, "commands") and word in command.commands:
                    command = command.commands[word]
                    path.append(word)
                elif hasattr(command, "commands"):
                    break  # not a command: a placeholder or prose
                i += 1
    assert checked > 100 and not wrong, wrong


def _setting_names(model: type[BaseModel], prefix: str = "") -> list[str]:
    names = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names.extend(_setting_names(annotation, f"{prefix}{name}."))
        else:
            names.append(f"{prefix}{name}")
    return names


def test_every_setting_is_documented() -> None:
    missing = [name for name in _setting_names(Settings) if f"`{name}`" not in DOCS]
    assert not missing, f"settings not in README.md or docs/: {missing}"


def _setting_of(name: str) -> bool:
    """Whether the dotted ``name`` (``lifecycle.hygiene.max_age_s``) is one of engram's settings."""
    model: object = Settings
    for part in name.split("."):
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return False
        model = model.model_fields[part].annotation
    return True


def test_every_setting_the_docs_name_exists() -> None:
    """A setting named in prose (`files.max_forget_share`, `privacy.pii = "redact"`) is one engram has:
    a renamed or removed setting leaves no page telling readers to set it. The pages on coming from
    another system quote that system's keys (PtrClaw's `embeddings.text_weight`), so they are left out."""
    sections = [name for name, info in Settings.model_fields.items()
                if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)]
    named = re.compile(r"`((?:" + "|".join(sections) + r")\.[a-z_][a-z0-9_.]*[a-z0-9_])(?:\s*=[^`]*)?`")
    pages = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")
                                  if "coming-from" not in p.parts)]
    found = [(page, m.group(1)) for page in pages for m in named.finditer((ROOT / page).read_text())]
    wrong = sorted({f"{page}: `{name}`" for page, name in found if not _setting_of(name)})
    assert len(found) > 200 and not wrong, f"no such setting: {wrong}"


@pytest.mark.parametrize("page", ["docs/configuration.md", "docs/coming-from/php-entity.md"])
def test_config_file_examples_load_as_written(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    """Each `config.toml` example of a page is read with no warning (every key one engram knows) and
    sets each setting it names to the value it gives."""
    import logging
    import tomllib

    for name in [n for n in os.environ if n.startswith("ENGRAM_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    blocks = re.findall(r"```toml\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert blocks, f"{page} has no TOML example"
    for index, block in enumerate(blocks):
        config = tmp_path / f"config-{index}.toml"
        config.write_text(block)
        with caplog.at_level(logging.WARNING):
            settings = load_settings(config=config)
        assert not caplog.records, [r.getMessage() for r in caplog.records]

        def leaves(table: dict[str, object], prefix: str = "") -> list[tuple[str, object]]:
            return [pair for key, value in table.items()
                    for pair in (leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else [(f"{prefix}{key}", value)])]

        for name, given in leaves(tomllib.loads(block)):
            value: object = settings
            for part in name.split("."):
                value = getattr(value, part)
            assert getattr(value, "value", value) == given, f"{page}: {name} = {given!r} read as {value!r}"


def test_every_backend_is_in_the_pages_that_list_them() -> None:
    """concepts.md's backends table and history.md's ``history.backend`` row name every built-in
    backend (PostgreSQL was missing from both, though a URL alone selects it)."""
    from engram import registry

    concepts = (ROOT / "docs" / "concepts.md").read_text().split("## Backends", 1)[1]
    listed = set(re.findall(r"^\| `([a-z]+)`", concepts, re.M))
    unlisted = set(registry.names("backend")) - listed
    assert not unlisted, f"not in concepts.md's backends table: {unlisted}"
    row = re.search(r"^\| `history\.backend` \|.*$", (ROOT / "docs" / "history.md").read_text(), re.M)
    assert row, "docs/history.md has no history.backend row"
    allowed = row.group(0).rstrip(" |").rsplit("|", 1)[1]
    missing = [name for name in registry.names("history") if f"`{name}`" not in allowed]
    assert not missing, f"history.md's history.backend row leaves out {missing}"


def _template(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


# A row of a settings table: | `name` | `ENGRAM_NAME` (maybe more) | default | meaning |
_SETTING_ROW = re.compile(r"^\| `([a-z_.]+)` \| `(ENGRAM_[A-Z_]+)`[^|]*\| ([^|]*) \|", re.M)


def test_settings_tables_give_each_settings_variable_and_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every row of the docs' settings tables names a setting that exists, the environment variable
    that sets it, and, where the default is one literal (`100`, `true`, `["summary", "item"]`), the
    default engram uses. (Defaults derived at start-up, such as folders in the home, are said in words.)"""
    import json

    for name in [n for n in os.environ if n.startswith("ENGRAM_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = Settings()
    rows, wrong = 0, []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for name, env, default in _SETTING_ROW.findall(page.read_text()):
            rows += 1
            where = f"{page.relative_to(ROOT)} `{name}`"
            value: object = settings
            for part in name.split("."):
                value = getattr(value, part, _SETTING_ROW)
            if value is _SETTING_ROW:
                wrong.append(f"{where}: no such setting")
                continue
            if env != "ENGRAM_" + name.upper().replace(".", "__"):
                wrong.append(f"{where}: its variable is not {env}")
            literal = re.match(r"\s*`([^`]*)`", default)
            if literal is None or value is None or isinstance(value, Path):
                continue
            try:
                documented = json.loads(literal.group(1))
            except json.JSONDecodeError:
                documented = literal.group(1)
            actual = getattr(value, "value", value)  # an enum's value
            actual = list(actual) if isinstance(actual, tuple | frozenset) else actual
            if documented != actual:
                wrong.append(f"{where}: documented default {literal.group(1)}, engram's {actual!r}")
    assert rows > 100 and not wrong, wrong


def test_every_http_route_is_documented(tmp_path: Path) -> None:
    from engram.auth import TokenStore
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.store.inmemory import InMemoryMemoryStore

    tokens = TokenStore.open(tmp_path / "tokens.db")
    try:
        paths = create_app(Engram(InMemoryMemoryStore()), tokens).openapi()["paths"]
    finally:
        tokens.close()
    http_docs = _template((ROOT / "docs" / "http.md").read_text())
    missing = [p for p in paths if _template(p) not in http_docs]
    assert paths and not missing, f"routes not in docs/http.md: {missing}"


def test_every_mcp_tool_and_resource_is_documented() -> None:
    from engram.interfaces.mcp.server import build_server

    server = build_server(lambda: None, tools="both")  # type: ignore[arg-type,return-value]
    tools = [t.name for t in asyncio.run(server.list_tools())]
    resources = [str(r.uri) for r in asyncio.run(server.list_resources())]
    mcp_docs = (ROOT / "docs" / "mcp.md").read_text()
    missing = [name for name in [*tools, *resources] if f"`{name}`" not in mcp_docs]
    assert tools and not missing, f"not in docs/mcp.md: {missing}"


@pytest.mark.parametrize("page", ["README.md", "docs/python-api.md"])
def test_readme_python_example_runs(page: str, isolated_home: Path, capsys) -> None:
    block = re.search(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert block
    exec(compile(block.group(1), page, "exec"), {})
    out = capsys.readouterr().out
    assert "user-prefers-python-scripting" in out


def test_python_api_page_quotes_the_error_the_library_raises(isolated_home: Path) -> None:
    """docs/python-api.md's example of a value of the wrong type is the message ``remember`` gives."""
    from engram import Engram
    from engram.errors import ValidationError

    page = re.sub(r"\s+", " ", (ROOT / "docs" / "python-api.md").read_text())
    quoted = re.search(r'\(`(importance: got "0\.5" \(text\) [^`]*)`\)', page)
    assert quoted, "docs/python-api.md no longer quotes the importance error"
    with Engram.from_settings() as mem, pytest.raises(ValidationError) as refused:
        mem.remember("x", importance="0.5")  # type: ignore[arg-type]
    assert str(refused.value) == quoted.group(1)


@pytest.mark.parametrize("page", ["docs/importing.md", "docs/privacy.md", "docs/coming-from/sclaw.md"])
def test_python_examples_run_and_print_what_their_comments_say(page: str, isolated_home: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A page's Python examples run as copied (in a folder of their own: they write their input
    files), and each ``print(...)  # TEXT`` prints a line TEXT starts with."""
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), re.S)
    assert blocks, f"{page} has no Python example"
    for block in blocks:
        exec(compile(block, page, "exec"), {"__name__": "__main__"})
        printed = capsys.readouterr().out.splitlines()
        expected = [line.split("#", 1)[1].strip() for line in block.splitlines() if "print(" in line and "#" in line]
        assert expected and len(printed) == len(expected), (printed, expected)
        for line, comment in zip(printed, expected, strict=True):
            assert comment.startswith(line), f"{page}: printed {line!r}, the comment says {comment!r}"


# Commands in README.md that do not return (servers) or are the test suite itself, and pip lines
# (tests/test_packaging.py installs the package the way they say).
_NOT_RUN = ("engram serve", "engram mcp", "scripts/test.sh", "pip install", "pipx ", "uvx ")


def _shell_commands(text: str) -> list[str]:
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not any(skip in line for skip in _NOT_RUN):
                commands.append(line)
    return commands


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_readme_shell_examples_run(page: str, isolated_home: Path) -> None:
    """The shell examples of the landing page and of getting started run as written."""
    commands = _shell_commands((ROOT / page).read_text())
    assert any("recall" in c for c in commands), commands
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "COLUMNS": "200"}
    engram = [sys.executable, "-m", "engram"]
    for line in commands:
        for part in line.split("&&"):
            words = shlex.split(part)
            assert words[0] in ("engram", "./engram"), f"{page} example is not an engram command: {part}"
            run = subprocess.run([*engram, *words[1:]], capture_output=True, text=True, env=env, timeout=120)
            assert run.returncode == 0, f"{page} example failed: {part}\n{run.stderr}"
            if "recall" in words:
                assert "python" in run.stdout.lower(), f"{part} recalled nothing:\n{run.stdout}"


def test_privacy_shell_example_keeps_the_home_private(tmp_path: Path) -> None:
    """docs/privacy.md's key set-up, run by bash as written in a new home: the key, the home that
    holds every memory, and the database the command makes are for the owner only / encrypted. (It
    made the home with the shell's umask first: a 0755 home, which engram then kept as it was.)"""
    pytest.importorskip("sqlcipher3", reason="the example needs the lifecycle extra")
    block = re.search(r"```bash\n(.*?)```", (ROOT / "docs" / "privacy.md").read_text(), re.S)
    assert block
    script = "\n".join(line for line in block.group(1).splitlines() if "pip install" not in line)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(HOME=str(tmp_path), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    run = subprocess.run(["bash", "-euc", f"umask 022\n{script}"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    home = tmp_path / ".engram"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700 and stat.S_IMODE((home / "key").stat().st_mode) == 0o600
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(home / "memory.db").execute("SELECT count(*) FROM sqlite_master").fetchone()


@pytest.mark.parametrize("page", ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))])
def test_relative_links_point_at_files(page: str) -> None:
    text = (ROOT / page).read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if target.startswith("reference/") or "/reference/" in target or target.startswith("../reference/"):
            continue  # generated at build time (scripts/mkdocs_hooks.py); the site build checks them
        assert (ROOT / page).parent.joinpath(target).resolve().exists(), f"{page} links to missing {target}"


INTEGRATIONS = (ROOT / "docs" / "integrations.md").read_text()
# What an example in docs/integrations.md needs beyond engram: the module it imports from the extra.
_EXTRA_MODULES = {"from langgraph": "langgraph", "from langchain_core": "langchain_core", "from agents": "agents",
                  "from pydantic_ai": "pydantic_ai",
                  "from llama_index": "llama_index.core", "from agno": "agno", "from strands": "strands",
                  "from autogen_agentchat": "autogen_agentchat", "from autogen_ext.models.openai": "autogen_ext.models.openai",
                  "from crewai": "crewai", "from engram.integrations.langgraph": "langgraph",
                  "from google.adk": "google.adk"}


_EXAMPLES = re.findall(r"```python\n(.*?)```", INTEGRATIONS, re.S)


def _example_id(index: int) -> str:
    """The example's number, and the framework it needs (``7-crewai``): scripts/test.sh's CrewAI pass
    selects the CrewAI one by it."""
    needs = next((module for marker, module in _EXTRA_MODULES.items() if marker in _EXAMPLES[index]), None)
    return f"{index}-{needs}" if needs else str(index)


@pytest.mark.parametrize("index", range(len(_EXAMPLES)), ids=_example_id)
def test_integrations_examples_run_as_copied(index: int, isolated_home: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest) -> None:
    """Each Python example in docs/integrations.md runs as a script on its own: everything it uses
    is imported or defined in it. The OpenAI Agents, Pydantic AI, Agno, Strands, AutoGen and CrewAI examples
    talk to a scripted model instead of OpenAI (the only thing replaced)."""
    block = _EXAMPLES[index]
    if "from crewai" in block:
        # CrewAI's telemetry, tracing and version check off, as the example's notes tell a user; set
        # before CrewAI is imported, which writes to the user's home (kept in the test's own).
        for name, value in {"CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true",
                            "CREWAI_TRACING_ENABLED": "false", "CREWAI_DISABLE_VERSION_CHECK": "true",
                            "CREWAI_TESTING": "true", "HOME": str(isolated_home / "user"),
                            "XDG_DATA_HOME": str(isolated_home / "user" / ".local" / "share")}.items():
            monkeypatch.setenv(name, value)
    for marker, module in _EXTRA_MODULES.items():
        if marker in block:
            pytest.importorskip(module, reason=f"the example needs {module} (its engram extra)")
    if "from agents" in block:
        from agents.models.multi_provider import MultiProvider

        from tests.integrations.test_openai_agents_session import ScriptedModel

        monkeypatch.setattr(MultiProvider, "get_model", lambda self, name: ScriptedModel())
        monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    if "from pydantic_ai" in block:
        from pydantic_ai import models
        from pydantic_ai.models.test import TestModel

        # Pydantic AI's offline model, calling the memory tools it is given (forget needs one selector).
        monkeypatch.setattr(models, "infer_model", lambda name, *a, **k: TestModel(call_tools=["remember", "recall"]))
    if "from agno" in block:
        from engram.testing.llm_servers import OpenAICompatServer
        from tests.integrations.scripted_chat import remembers_then_recalls

        # Agno's OpenAI model against the local chat-completions server (OpenAI's client reads the URL).
        server = OpenAICompatServer(responder=remembers_then_recalls).start()
        request.addfinalizer(server.stop)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("AGNO_TELEMETRY", "false")
    if "from strands" in block:
        from engram.testing.llm_servers import OpenAICompatServer
        from tests.integrations.scripted_chat import remembers_then_recalls as strands_model

        # Strands' OpenAI model against the local chat-completions server (OpenAI's client reads the URL).
        server = OpenAICompatServer(responder=strands_model).start()
        request.addfinalizer(server.stop)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    if "from autogen_agentchat" in block:
        from engram.testing.llm_servers import OpenAICompatServer
        from tests.integrations.test_autogen import _echo_memory as autogen_model

        # AutoGen's OpenAI client against the local chat-completions server (OpenAI's client reads the URL).
        server = OpenAICompatServer(responder=autogen_model).start()
        request.addfinalizer(server.stop)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        # The scripted server answers with the model name asked for, not OpenAI's dated one.
        warnings.filterwarnings("ignore", "Resolved model mismatch", UserWarning)
    if "from crewai" in block:
        from engram.testing.llm_servers import OpenAICompatServer
        from tests.integrations.scripted_chat import remembers_then_recalls as crewai_model

        # CrewAI's OpenAI provider against the local chat-completions server (it reads the URL).
        server = OpenAICompatServer(responder=crewai_model).start()
        request.addfinalizer(server.stop)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    exec(compile(block, f"docs/integrations.md example {index + 1}", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip() or "print(" not in block


def test_http_curl_examples_run_against_a_server(tmp_path: Path) -> None:
    """docs/http.md's curl examples, run by bash as written against a real server (its address
    in place of the default port's): the key-named memory is read, and the PATCH clears its end."""
    import json

    from tests.interfaces.conftest import serving

    block = next(b for b in re.findall(r"```bash\n(.*?)```", (ROOT / "docs" / "http.md").read_text(), re.S) if "curl" in b)
    with serving(tmp_path) as served:
        alice = served.engram.for_agent("alice")
        alice.remember("Deploys happen on Fridays", key="search")
        alice.remember("Standup moved to 10:00", key="notes/today", valid_until="2030-01-01")
        script = block.replace("http://127.0.0.1:8765", served.url)
        run = subprocess.run(["bash", "-euc", script], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "TOKEN": served.alice})
    assert run.returncode == 0, run.stderr
    read, patched = [json.loads(line) for line in run.stdout.replace("}{", "}\n{").splitlines()]
    assert read["key"] == "search" and read["content"] == "Deploys happen on Fridays", read
    assert patched["action"] == "updated" and patched["memory"]["key"] == "notes/today", patched
    assert patched["memory"]["valid_until"] is None, patched
