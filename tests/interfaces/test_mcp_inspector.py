"""`engram mcp` driven by a client nobody here wrote: the MCP Inspector's CLI mode (npm package
``@modelcontextprotocol/inspector``, installed into tests/js by scripts/test.sh), through remember
and recall in separate sessions, as the installed command a client would launch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INSPECTOR = Path(__file__).resolve().parents[1] / "js" / "node_modules" / ".bin" / "mcp-inspector"
ENGRAM = str(Path(sys.executable).with_name("engram"))

pytestmark = pytest.mark.skipif(
    not INSPECTOR.exists() or shutil.which("node") is None,
    reason="the MCP Inspector is not installed: run scripts/test.sh (npm ci --prefix tests/js; needs node and npm)")


def inspector(home: Path, agent: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(INSPECTOR), "--cli", "-e", f"ENGRAM_HOME={home}", ENGRAM, "--agent", agent, "mcp", *args],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


def call(home: Path, agent: str, tool: str, **arguments: str) -> dict[str, Any]:
    flags = [f for name, value in arguments.items() for f in ("--tool-arg", f"{name}={value}")]
    result = inspector(home, agent, "--method", "tools/call", "--tool-name", tool, *flags)
    assert result["isError"] is False, result
    return result["structuredContent"]


def test_inspector_lists_remembers_and_recalls(tmp_path: Path) -> None:
    home = tmp_path / "home"
    listed = inspector(home, "ada", "--method", "tools/list")["tools"]
    assert {"remember", "recall", "forget", "link", "get", "list", "update"} <= {t["name"] for t in listed}
    stored = call(home, "ada", "remember", content="The staging server listens on port 8443", tags='["ops"]')
    assert stored["action"] == "created"
    found = call(home, "ada", "recall", query="which port does staging use")["results"]
    assert found[0]["memory_id"] == stored["memory_id"] and found[0]["tags"] == ["ops"]
    assert call(home, "grace", "recall", query="which port does staging use")["results"] == []
