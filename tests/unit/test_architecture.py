"""The architecture, held by a test: who may read the environment, and which packages may
import which. Read from the source (``ast``), so a new module is checked the day it is added."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "engram"

# Settings are read in config.py (and started from engram.root); these few read one variable of
# another program's, each for a reason the settings cannot carry.
ENVIRONMENT_READERS = {
    "allocator.py": "MALLOC_ARENA_MAX, glibc's own setting: a user's value is left to glibc",
    "config.py": "ENGRAM_* settings, the config file's location",
    "embed/settings.py": "a provider's usual API key / base URL variables, as fallbacks",
    "embed/local.py": "sets HF_HUB_OFFLINE so the bundled model never reaches a hub",
    "llm/__init__.py": "a chat provider's usual API key variable, as a fallback",
    "provider_keys.py": "the one table of paid services' usual key variables, read as fallbacks",
    "interfaces/cli/editor.py": "VISUAL and EDITOR, the editor --edit starts, as git reads them",
    "interfaces/cli/render.py": "COLUMNS, the width a script asks of tables sent to a pipe (rich reads it too)",
    "interfaces/mcp/install.py": "%APPDATA%, where a desktop client keeps its config on Windows",
    "temporal/reader.py": "TZ, the machine's time zone, for reading relative dates",
    "testing/history_contract.py": "hands the environment to the contract's worker processes",
    "testing/pg_server.py": "runs the test PostgreSQL server's programs",
}

# Storage knows nothing of what is built on it.
STORAGE = ("store", "history", "db")
FORBIDDEN_FOR_STORAGE = ("engram.agent", "engram.lifecycle", "engram.interfaces", "engram.root", "engram.backends")


def modules() -> list[tuple[str, ast.Module]]:
    return [(path.relative_to(SRC).as_posix(), ast.parse(path.read_text("utf-8"))) for path in sorted(SRC.rglob("*.py"))]


def reads_environment(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb") \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                a.name in ("environ", "getenv") for a in node.names):
            return True
    return False


def imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_the_listed_modules_read_the_environment() -> None:
    readers = {name for name, tree in modules() if reads_environment(tree)}
    assert readers - set(ENVIRONMENT_READERS) == set(), "read settings through engram.config instead"
    assert set(ENVIRONMENT_READERS) - readers == set(), "a listed module no longer reads it: shorten the list"


def test_storage_never_imports_agent_lifecycle_interfaces_or_the_root() -> None:
    offences = [
        f"{name} imports {module}"
        for name, tree in modules() if name.split("/")[0] in STORAGE
        for module in sorted(imported(tree))
        if module.startswith(FORBIDDEN_FOR_STORAGE)
    ]
    assert offences == []


def test_settings_are_loaded_only_by_config_and_the_root() -> None:
    loaders = sorted(
        name for name, tree in modules()
        if name not in ("config.py", "root.py") and any(
            isinstance(node, ast.ImportFrom) and node.module == "engram.config"
            and any(a.name == "load_settings" for a in node.names) for node in ast.walk(tree))
    )
    assert loaders == []


def test_engram_model_exports_every_public_name_of_its_modules() -> None:
    # engram.model is a package laid out by concern (records, fields, drafts, ...); callers import
    # from engram.model itself, so a name added to one of its modules must be exported there too.
    import importlib
    import pkgutil

    import engram.model

    defined = {}
    for info in pkgutil.iter_modules(engram.model.__path__):
        module = importlib.import_module(f"engram.model.{info.name}")
        for name in _top_level_names(module.__file__):
            if not name.startswith("_"):
                assert name not in defined, f"{name} is defined in two modules of engram.model"
                defined[name] = getattr(module, name)
    assert sorted(engram.model.__all__) == sorted(defined)
    assert all(getattr(engram.model, name) is value for name, value in defined.items())


def _top_level_names(path: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(Path(path).read_text("utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names
