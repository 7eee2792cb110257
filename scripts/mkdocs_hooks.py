"""MkDocs hooks: the reference pages are generated from the code at build time, so they cannot drift.

- ``reference/cli.md``: every command, argument and option of ``engram`` (from the typer app).
- ``reference/configuration.md``: every setting with its environment variable, type and default
  (from the pydantic settings model), linked to the page that explains it.
- ``reference/api.md`` + ``reference/openapi.json``: the HTTP API's OpenAPI document rendered by the
  Swagger UI files engram ships (``interfaces/http/web``), so the page needs no network.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files
from pydantic import BaseModel


def on_files(files: Files, config: Any) -> Files:
    docs = Path(config["docs_dir"])
    pages = {
        "reference/cli.md": cli_reference(),
        "reference/configuration.md": settings_reference(docs),
        "reference/api.md": API_PAGE,
        "reference/openapi.json": json.dumps(openapi(), indent=1),
    }
    web = resources.files("engram.interfaces.http") / "web"
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        files.append(File.generated(config, f"reference/assets/{asset}", content=(web / asset).read_bytes()))
    for uri, text in pages.items():
        files.append(File.generated(config, uri, content=text))
    return files


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        found.append((path, command))
        if hasattr(command, "commands"):
            found.extend(_commands(command, path))
    return found


def cli_reference() -> str:
    import typer.main

    from engram.interfaces.cli.app import app

    root = typer.main.get_command(app)
    out = ["# CLI reference", "", "Generated from the `engram` command itself. Global options go before the",
           "subcommand (`--json` may also follow it).", "", "## engram", "", _params(root)]
    for path, command in _commands(root, "engram"):
        out += [f"## {path}", "", (command.help or "").strip(), "", _params(command)]
    return "\n".join(out) + "\n"


def _params(command: Any) -> str:
    rows = ["| argument / option | help | default |", "|---|---|---|"]
    for p in command.params:
        if getattr(p, "hidden", False):
            continue
        names = ", ".join(f"`{o}`" for o in p.opts) if getattr(p, "param_type_name", "") == "option" else f"`{p.name.upper()}`"
        default = p.default if p.default not in (None, False, ()) and not callable(p.default) else ""
        text = (getattr(p, "help", None) or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {names} | {text} | {_cell(default)} |")
    return "\n".join(rows) if len(rows) > 2 else "(no arguments)"


def _cell(value: Any) -> str:
    return f"`{value}`".replace("|", "\\|") if value not in ("", None) else ""


def setting_rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, Any, str]]:
    """(dotted name, type, default, description) of every leaf setting."""
    rows = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows.extend(setting_rows(annotation, f"{prefix}{name}."))
            continue
        kind = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        default = info.get_default(call_default_factory=True) if not info.is_required() else "(required)"
        rows.append((f"{prefix}{name}", kind, default, info.description or ""))
    return rows


def settings_reference(docs: Path) -> str:
    from engram.config import Settings

    texts = {p.relative_to(docs).as_posix(): p.read_text() for p in docs.rglob("*.md")}
    out = ["# Configuration reference", "",
           "Generated from the settings model. Each setting is read from, in order: arguments, the",
           "environment (`ENGRAM_` + the dotted name in capitals, `__` between levels), the config file,",
           "then the default. The page column links to where the setting is explained.", "",
           "| setting | environment | type | default | explained in |", "|---|---|---|---|---|"]
    for name, kind, default, description in setting_rows(Settings):
        env = "ENGRAM_" + name.upper().replace(".", "__")
        where = [page for page, text in sorted(texts.items()) if f"`{name}`" in text]
        links = ", ".join(f"[{Path(p).stem}](../{p})" for p in where)
        if name == "home":
            default = "~/.engram"
        shown = json.dumps(default) if isinstance(default, list | dict | tuple) else default
        kind = re.sub(r"<class '([^']+)'>", r"\1", str(kind)).replace("|", "\\|")
        out.append(f"| `{name}` | `{env}` | {kind} | {_cell(shown)} | {links or description} |")
    return "\n".join(out) + "\n"


def openapi() -> dict[str, Any]:
    import tempfile

    from engram.auth import TokenStore
    from engram.engine import Engram
    from engram.interfaces.http.app import create_app
    from engram.store.inmemory import InMemoryMemoryStore

    with tempfile.TemporaryDirectory() as tmp:  # the app needs a token store; the document does not
        tokens = TokenStore.open(Path(tmp) / "tokens.db")
        try:
            return create_app(Engram(InMemoryMemoryStore()), tokens).openapi()
        finally:
            tokens.db.close()


API_PAGE = """# HTTP API reference

The OpenAPI document of `engram serve` ([openapi.json](openapi.json)), rendered with the Swagger UI
files engram ships: nothing is fetched from the network. Every `/api` route needs
`Authorization: Bearer <token>` (`engram token create --agent NAME`). A running server serves the
same page at `/docs`. The guide is [HTTP API and web page](../http.md).

<link rel="stylesheet" href="../assets/swagger-ui.css">
<div id="swagger-ui"></div>
<script src="../assets/swagger-ui-bundle.js"></script>
<script>
window.addEventListener("load", function () {
  SwaggerUIBundle({url: "../openapi.json", dom_id: "#swagger-ui", supportedSubmitMethods: []});
});
</script>
"""
