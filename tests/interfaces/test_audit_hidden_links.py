"""The audit trail never tells one agent that another agent linked something to a global memory.

Alice linking her own memory to a global one wrote, on the global memory's row, ``{"with": []}``
(the other end is hers, so not named): every agent reads a global memory's rows, so bob learned
that something hidden from him was linked to it, and when. An agent's view of the trail now leaves
such a row out at every door (library, CLI, HTTP); the agent that linked still reads it, and an
operator's ``audit_of(every_agent=True)`` still shows the whole record. Real SQLite file, HTTP over
a real socket, the CLI as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.interfaces.conftest import Served


def _sorted(rows: list) -> list:
    return sorted(rows, key=json.dumps)


def _links(rows: list) -> list[tuple[str, str | None, object]]:
    return [(r.action, r.memory_key, r.detail) for r in rows if r.action in ("linked", "unlinked")]


def test_another_agents_link_to_a_global_memory_is_not_in_an_agents_trail(served: Served, isolated_home: Path) -> None:
    alice, bob = served.engram.for_agent("alice"), served.engram.for_agent("bob")
    office = bob.remember("The office opens at nine", key="office", scope="global").memory
    hours = bob.remember("The office closes at six", key="hours", scope="global").memory
    bob.link(office, hours)  # both ends global: every agent may read this row, and does
    mine = alice.remember("Alice's salary review is on Friday", key="review").memory
    alice.link(mine, office)
    alice.unlink(mine, office)
    seen_by_bob = [("linked", "hours", {"with": ["office"]}), ("linked", "office", {"with": ["hours"]})]
    assert _sorted(_links(bob.audit_trail(100))) == _sorted(seen_by_bob)
    assert _links(bob.audit_of(office.id)) == [("linked", "office", {"with": ["hours"]})]
    assert _links(bob.audit_trail(1, action="unlinked")) == []
    # Alice linked: she reads both rows of her link, the global memory's included.
    assert _sorted(_links(alice.audit_trail(100, action="linked"))) == _sorted(
        [*seen_by_bob, ("linked", "office", {"with": []}), ("linked", "review", {"with": ["office"]})])
    assert [r.action for r in alice.audit_of(office.id)] == ["stored", "linked", "linked", "unlinked"]
    # The operator's record stays whole.
    assert len(_links(bob.audit_of(office.id, every_agent=True))) == 3
    # A limit counts what the agent is shown: rows left out do not shorten the answer.
    assert [r.action for r in bob.audit_trail(3)] == ["linked", "linked", "stored"]

    with served.client(served.bob) as http:
        answer = http.get("/api/v1/audit", params={"limit": 100})
        assert answer.status_code == 200, answer.text
        rows = [(e["action"], e["memory_key"], e["detail"]) for e in answer.json()["entries"]
                if e["action"] in ("linked", "unlinked")]
        assert _sorted(rows) == _sorted(seen_by_bob), rows
    with served.client(served.alice) as http:
        unlinked = http.get("/api/v1/audit", params={"action": "unlinked"}).json()["entries"]
        assert sorted(e["memory_key"] for e in unlinked) == ["office", "review"], unlinked

    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_PATH": str(served.db_path), "ENGRAM_AGENT": "bob",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    shown = subprocess.run([sys.executable, "-m", "engram", "--json", "audit", "--limit", "100"], capture_output=True,
                           text=True, env=env, timeout=120)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    rows = [(e["action"], e["memory_key"], e["detail"]) for e in json.loads(shown.stdout)
            if e["action"] in ("linked", "unlinked")]
    assert _sorted(rows) == _sorted(seen_by_bob), rows
