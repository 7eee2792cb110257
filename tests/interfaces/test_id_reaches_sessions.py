"""A memory's id reaches it from every view of its agent, whatever session holds it, and from no
other agent's: ``engram get/update/versions/link/forget ID`` (the CLI as a real process) from the
agent with no ``--session`` (or another one) act on a memory stored with ``--session``, as MCP's
tools do by the ``memory_id`` recall gave (``test_mcp_clawcode_compat``). A key stays read in the
view's scopes, and its not-found error names the session holding it; another agent, a session of
the same name included, gets a plain not-found that tells it nothing."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_cli import engram


def _json(home: Path, *args: str) -> dict:
    done = engram(home, "--json", *args)
    assert done.returncode == 0, (args, done.stderr)
    return json.loads(done.stdout)


def test_cli_reaches_a_session_memory_by_its_id_and_no_other_agent_does(isolated_home: Path) -> None:
    home = isolated_home
    stored = _json(home, "--agent", "alice", "--session", "sess_123", "remember",
                   "User prefers Python for scripting tasks", "--tags", "programming", "--scope", "session")["memory"]
    mid, key = stored["id"], stored["key"]
    other = _json(home, "--agent", "alice", "remember", "The build box runs Python 3.12", "--key", "box")["memory"]
    for view in (("--agent", "alice"), ("--agent", "alice", "--session", "sess_9")):
        got = _json(home, *view, "get", mid)
        assert (got["id"], got["scope"]) == (mid, "session:alice/sess_123")
    changed = _json(home, "--agent", "alice", "update", mid, "--content", "User prefers Python for tooling")["memory"]
    assert (changed["id"], changed["scope"]) == (mid, "session:alice/sess_123")
    versions = _json(home, "--agent", "alice", "versions", mid)["versions"]
    assert [v["content"] for v in versions] == ["User prefers Python for scripting tasks"]
    assert engram(home, "--agent", "alice", "link", mid, "box").returncode == 0
    assert _json(home, "--agent", "alice", "get", mid)["links"] == [other["id"]]
    # The key is read where the view reads: the error names the session holding it and the id.
    missing = engram(home, "--agent", "alice", "get", key)
    assert missing.returncode == 3 and 'session "sess_123"' in missing.stderr and mid in missing.stderr, missing.stderr
    assert _json(home, "--agent", "alice", "--session", "sess_123", "get", key)["id"] == mid
    # Bob, and bob's session of the same name, reach none of it by its id, and learn nothing of it.
    for view in (("--agent", "bob"), ("--agent", "bob", "--session", "sess_123")):
        for command in (("get", mid), ("versions", mid), ("update", mid, "--content", "bob's now"),
                        ("forget", mid, "--reason", "bob's now"), ("get", key)):
            refused = engram(home, *view, *command)
            assert refused.returncode == 3 and "not found" in refused.stderr, (view, command, refused.stderr)
            assert "sess_123" not in refused.stderr, refused.stderr
    assert _json(home, "--agent", "alice", "get", mid)["content"] == "User prefers Python for tooling"
    # A forget by tag keeps to the view's scopes, or to one with --scope.
    in_session = ("--agent", "alice", "--session", "sess_123", "forget", "--tag", "programming", "--dry-run")
    assert [m["id"] for m in _json(home, "--agent", "alice", "forget", "--tag", "programming", "--dry-run")[
        "removed"]] == []
    assert [m["id"] for m in _json(home, *in_session, "--scope", "session")["removed"]] == [mid]
    assert [m["id"] for m in _json(home, *in_session, "--scope", "agent")["removed"]] == []
    removed = _json(home, "--agent", "alice", "forget", mid, "--reason", "Outdated preference")["removed"]
    assert [m["id"] for m in removed] == [mid]
    assert engram(home, "--agent", "alice", "--session", "sess_123", "get", mid).returncode == 3
