"""Each named awkward content (tests/awkward_contents.py) round-trips byte for byte through
PostgreSQL as through SQLite (tests/contract/test_awkward_roundtrip.py): remember, get, list,
recall, versions, a snapshot into a fresh database, history (message, metadata, tool-call
arguments, summary) and the memory folder; and text no store can hold is refused with the very
error SQLite gives, naming the field, with nothing stored changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files.sync import FileSync
from tests.awkward_contents import AWKWARD, MAX_CHARS, ONE_MB_LINE
from tests.contract.test_awkward_roundtrip import check_history, check_library, read_history
from tests.fuzz_inputs import UNSTORABLE

CONTENTS = {**AWKWARD, "one mb line": ONE_MB_LINE}


def _settings(url: str) -> dict[str, Any]:
    return {"database_url": url, "files": {"enabled": False}, "max_content_chars": MAX_CHARS}


@pytest.mark.parametrize("name", list(CONTENTS))
def test_round_trip_through_postgres(tmp_path: Path, new_database: Callable[[], str], name: str) -> None:
    text, url, folder = CONTENTS[name], new_database(), tmp_path / "memory"
    with Engram.from_settings(home=tmp_path / "home", **_settings(url)) as engram:
        snapshot = check_library(engram, text)
        check_history(engram, text)
        live = FileSync(engram, folder, format="markdown")
        live.attach()
        assert live.sync().db_created == 0  # writes the two memories' files
        assert not live.sync().changed  # and reads them back unchanged
        live.detach()
    with Engram.from_settings(home=tmp_path / "home", **_settings(url)) as reopened:
        assert (reopened.get("k1").content, reopened.get("k1").metadata) == (text, {"v": text})
        assert reopened.count() == 2
        read_history(reopened, text)
    with Engram.from_settings(home=tmp_path / "fresh", **_settings(new_database())) as fresh:
        fresh.import_snapshot(snapshot)
        assert (fresh.get("k1").content, fresh.get("k1").metadata) == (text, {"v": text})
    with Engram.from_settings(home=tmp_path / "from-files", **_settings(new_database())) as from_files:
        assert FileSync(from_files, folder, format="markdown").sync().problems == []
        assert from_files.get("k1").content == text and from_files.count() == 2


CALLS = {
    "content": lambda e, t: e.remember(t),
    "metadata": lambda e, t: e.remember("fine", metadata={"v": t}),
    "update content": lambda e, t: e.update("kept", content=t),
    "history content": lambda e, t: e.history.append("chat:1", "user", t),
    "history metadata": lambda e, t: e.history.append("chat:1", "user", "fine", metadata={"v": t}),
    "summary": lambda e, t: e.history.set_summary("chat:1", t),
}


@pytest.mark.parametrize("text", list(UNSTORABLE.values()), ids=list(UNSTORABLE))
@pytest.mark.parametrize("call", list(CALLS))
def test_unstorable_text_is_refused_as_on_sqlite(tmp_path: Path, pg_url: str, call: str, text: str) -> None:
    errors = []
    for home, settings in ((tmp_path / "sqlite", {"files": {"enabled": False}}), (tmp_path / "pg", _settings(pg_url))):
        with Engram.from_settings(home=home, **settings) as engram:
            engram.remember("kept", key="kept")
            engram.history.set_summary("chat:1", "kept summary")
            with pytest.raises(ValidationError) as raised:
                CALLS[call](engram, text)
            errors.append(str(raised.value))
            assert [m.content for m in engram.list()] == ["kept"]
            assert engram.history.all("chat:1") == [] and engram.history.summary("chat:1") == "kept summary"
    assert errors[0] == errors[1]  # the same words on both backends
