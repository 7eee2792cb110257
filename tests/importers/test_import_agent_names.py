"""A source's users stay distinct engram agents: an id that is a valid agent name is kept, any
other gets its usable part and a short hash of the whole id (never merged with another user's,
never refused for having no usable characters), the same every run."""

from __future__ import annotations

import json
import re
from pathlib import Path

from engram.engine import Engram
from engram.store.sqlite import SqliteMemoryStore

USERS = ["José", "Josè", "user 1", "user-1", "张伟", "alex"]


def test_distinct_source_users_are_distinct_agents_on_every_run(tmp_path: Path) -> None:
    document = json.dumps({"results": [{"id": f"m{i}", "memory": f"private fact of {user}", "user_id": user}
                                       for i, user in enumerate(USERS)]})
    with Engram(SqliteMemoryStore(tmp_path / "m.db"), agent="importer") as mem:
        assert mem.import_from(document, "mem0").imported == len(USERS)
        owners = {m.content.removeprefix("private fact of "): m.scope.agent for m in mem.store.iter_all()}
        assert len(set(owners.values())) == len(USERS), owners
        assert owners["user-1"] == "user-1" and owners["alex"] == "alex"  # valid names are kept as they are
        assert re.fullmatch(r"Jos-[0-9a-f]{8}", owners["José"]) and re.fullmatch(r"user-[0-9a-f]{8}", owners["张伟"])
        assert re.fullmatch(r"user-1-[0-9a-f]{8}", owners["user 1"])
        again = mem.import_from(document, "mem0")
        assert (again.imported, again.skipped) == (0, len(USERS))
