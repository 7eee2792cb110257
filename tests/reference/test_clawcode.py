"""ClawCode (reference 002) behaviours, checked at the doors a ClawCode user reaches: the ``engram``
command on a real SQLite file, HTTP over a socket, MCP with the SDK client."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_cli import engram


def test_cli_forget_keeps_the_reason_in_the_audit_trail(isolated_home: Path) -> None:
    # ClawCode: forget takes {"memory_id": ..., "reason": "Outdated preference"}, and
    # "5. Log deletion for audit trail".
    assert engram(isolated_home, "remember", "User prefers Perl", "--key", "lang").returncode == 0
    gone = engram(isolated_home, "--json", "forget", "lang", "--reason", "Outdated preference")
    assert gone.returncode == 0, gone.stderr
    assert [m["key"] for m in json.loads(gone.stdout)["removed"]] == ["lang"]
    trail = json.loads(engram(isolated_home, "--json", "audit", "--action", "forgotten").stdout)
    assert [(e["memory_key"], e["reason"]) for e in trail] == [("lang", "Outdated preference")]
