"""engram as a user installs it: the wheel and sdist build (``python -m build``), the wheel installs
core-only into a fresh venv and remembers and recalls from the command line, and with ``[server]``
its ``engram mcp`` answers an MCP client's ``tools/list``.

The installs resolve from the package index, constrained to ``requirements/lock.txt`` (the set CI
tests), so they take a minute or two: each venv holds only what its extras need.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _run(*args: str | Path, **kwargs) -> subprocess.CompletedProcess[str]:  # noqa: ANN003
    run = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **kwargs)
    assert run.returncode == 0, f"{' '.join(map(str, args))} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="the dev extra installs build")
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT)  # the sdist, then the wheel built from it
    return out


def _venv(tmp_path: Path, requirement: str) -> Path:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-c", ROOT / "requirements" / "lock.txt", requirement)
    return venv


def _clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(ENGRAM_HOME=str(home), COLUMNS="200")
    return env


def test_wheel_and_sdist_carry_the_name_licence_and_ranges(dist: Path) -> None:
    version = PROJECT["version"]
    wheel = dist / f"engram_recall-{version}-py3-none-any.whl"
    assert wheel.exists() and (dist / f"engram_recall-{version}.tar.gz").exists(), sorted(dist.iterdir())
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(f"engram_recall-{version}.dist-info/METADATA").decode()
    assert f"engram_recall-{version}.dist-info/licenses/LICENSE" in names
    assert any(n.startswith("engram/db/migrations/sqlite/") and n.endswith(".sql") for n in names)
    assert "Name: engram-recall" in meta
    # The licence a user sees covers the vendored web page files too, and their notices ship.
    notices = "src/engram/interfaces/http/web/THIRD-PARTY.md"
    assert f"engram_recall-{version}.dist-info/licenses/{notices}" in names
    vendored = {row.split("|")[3].strip() for row in (ROOT / notices).read_text().splitlines()
                if row.startswith("| ") and not row.startswith(("| file", "|---"))}
    expression = next(line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("License-Expression:"))
    assert set(expression.split(" AND ")) == {"Apache-2.0"} | vendored, expression
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    pinned = [r for r in requires if "==" in r.split(";")[0]]  # markers may say ==, versions may not
    assert requires and not pinned, f"dependencies must be ranges: {pinned}"


def test_wheel_ships_every_source_file_and_the_sdist_only_what_builds_it(dist: Path) -> None:
    # Every tracked file under src/engram ships (package data a pattern forgot would be missing
    # at run time: migrations, prompts, the vocabulary, the web page, py.typed), and nothing else.
    listed = subprocess.run(["git", "ls-files", "src/engram"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("needs a git checkout to know the tracked source files")
    tracked = {name.removeprefix("src/") for name in listed.stdout.splitlines()}
    version = PROJECT["version"]
    with zipfile.ZipFile(dist / f"engram_recall-{version}-py3-none-any.whl") as zf:
        shipped = {n for n in zf.namelist() if not n.startswith(f"engram_recall-{version}.dist-info/")}
    assert shipped == tracked, {"missing": sorted(tracked - shipped), "extra": sorted(shipped - tracked)}
    # The sdist: the wheel's sources and what builds them; the test suite needs the checkout.
    with tarfile.open(dist / f"engram_recall-{version}.tar.gz") as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile()}
    top = {"PKG-INFO", "setup.cfg", "pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"}
    stray = sorted(m for m in members if m not in top and not m.startswith(("src/engram/", "src/engram_recall.egg-info/")))
    assert not stray, stray
    assert {f"src/{name}" for name in tracked} <= members


def test_core_only_install_remembers_and_recalls_on_full_text(dist: Path, tmp_path: Path) -> None:
    venv = _venv(tmp_path, str(next(dist.glob("*.whl"))))
    engram = venv / "bin" / "engram"
    env = _clean_env(tmp_path / "home")
    assert _run(engram, "--version", env=env).stdout.strip() == f"engram {PROJECT['version']} (engram-recall)"
    _run(engram, "remember", "User prefers Python for scripting", "--tags", "preferences", env=env)
    found = json.loads(_run(engram, "recall", "python scripting", "--json", env=env).stdout)
    assert found["mode"] == "text"
    assert found["hits"][0]["memory"]["content"] == "User prefers Python for scripting"
    assert any("pip install 'engram-recall[local]'" in note for note in found["notes"]), found["notes"]
    # the extras it does not have are named, not crashed on
    serve = subprocess.run([engram, "serve"], capture_output=True, text=True, env=env, timeout=120)
    assert serve.returncode == 4 and "pip install 'engram-recall[server]'" in serve.stderr, serve.stderr


def test_server_install_answers_mcp_tools_list(dist: Path, tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    wheel = next(dist.glob("*.whl"))
    venv = _venv(tmp_path, f"engram-recall[server] @ {wheel.as_uri()}")
    params = StdioServerParameters(command=str(venv / "bin" / "engram"), args=["--agent", "assistant", "mcp"],
                                   env=_clean_env(tmp_path / "home"))

    async def tools() -> set[str]:
        async with Client(params) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert {"remember", "recall", "forget", "link", "get"} <= asyncio.run(tools())
