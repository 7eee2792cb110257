"""A snapshot that repeats an entry's id (or its key in one scope) with other fields is refused
naming both entries, before anything is stored; an identical copy is one memory and one skipped.

QA: a snapshot holding two entries with the same id imported the first and dropped the second,
reported as "skipped 1 already present". A memory folder with a repeated id now says which entry
it did not import.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.engine import Engram
from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from engram.store.sqlite import SqliteMemoryStore

ID = "0190a1b2-0000-7000-8000-000000000001"


def engram_snapshot(*entries: dict) -> str:
    return json.dumps({"format": "engram-snapshot", "version": 1, "memories": list(entries)})


REFUSED = [
    (engram_snapshot({"id": ID, "key": "a", "content": "first"}, {"id": ID, "key": "b", "content": "second"}),
     f"memories[1].id: \"{ID}\" repeats memories[0], which differs"),
    (engram_snapshot({"content": "ok", "key": "fine"}, {"id": ID, "content": "x"}, {"id": ID, "content": "x!"}),
     f"memories[2].id: \"{ID}\" repeats memories[1], which differs"),
    # PtrClaw's files name entries by key: the same key twice in one scope is the same clash.
    (json.dumps([{"key": "pin", "content": "first"}, {"key": "pin", "content": "second"}]),
     "entries[1].key: \"pin\" repeats entries[0]'s key in agent:alice, which differs"),
    (json.dumps([{"content": "same words"}, {"content": "same words", "tags": ["x"]}]),
     "entries[1].content: repeats entries[0]'s key in agent:alice, which differs"),
]


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")  # the CLI need not load one


@pytest.fixture
def alice(tmp_path: Path):
    with Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice") as engram:
        yield engram


@pytest.mark.parametrize(("document", "message"), REFUSED)
def test_a_repeat_that_differs_is_refused_and_nothing_is_stored(alice: Engram, document: str, message: str) -> None:
    with pytest.raises(SnapshotError) as err:
        alice.import_snapshot(document)
    assert str(err.value).startswith(message), str(err.value)
    assert "identical copy" in err.value.allowed
    assert alice.store.stats().memories == 0  # not even the entries before the repeat


def test_an_identical_copy_is_one_memory_and_one_skipped(alice: Engram) -> None:
    entry = {"id": ID, "key": "a", "content": "first", "tags": ["t"]}
    result = alice.import_snapshot(engram_snapshot(entry, dict(entry)))
    assert (result.imported, result.skipped) == (1, 1)
    assert alice.get("a").id == ID
    ptrclaw = alice.import_snapshot(json.dumps([{"key": "k", "content": "x"}, {"key": "k", "content": "x"}]))
    assert (ptrclaw.imported, ptrclaw.skipped) == (1, 1)


def test_one_id_in_two_scopes_repeats_but_one_key_in_two_scopes_does_not(alice: Engram) -> None:
    # One id in two scopes of the snapshot (agent and global) is still one id: refused as differing.
    with pytest.raises(SnapshotError):
        alice.import_snapshot(engram_snapshot({"id": ID, "content": "mine", "scope": "agent:alice"},
                                              {"id": ID, "content": "everyone's", "scope": "global"}))
    # The same key in two scopes is two memories.
    result = alice.import_snapshot(engram_snapshot({"key": "k", "content": "mine", "scope": "agent:alice"},
                                                   {"key": "k", "content": "everyone's", "scope": "global"}))
    assert (result.imported, result.skipped) == (2, 0)


def test_the_cli_refuses_the_file_naming_the_repeat(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(REFUSED[0][0], encoding="utf-8")
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["--home", str(home), "import", str(path)])
    assert isinstance(result.exception, SnapshotError), result.output
    assert str(result.exception).startswith(REFUSED[0][1])
    count = CliRunner().invoke(app, ["--home", str(home), "--json", "count"])
    assert json.loads(count.output) == {"count": 0}


def test_a_memory_folder_reports_the_entry_it_did_not_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Engram.from_settings(home=home) as engram:
        engram.remember("The user likes tea", key="tea")
    out = tmp_path / "folder"
    assert CliRunner().invoke(app, ["--home", str(home), "export", str(out), "--format", "markdown"]).exit_code == 0
    page = out / "agents" / "default" / "knowledge.md"
    line = next(x for x in page.read_text(encoding="utf-8").splitlines() if x.startswith("- "))
    with page.open("a", encoding="utf-8") as f:
        f.write(line.replace("likes tea", "likes green tea") + "\n")  # a copied line, edited
    result = CliRunner().invoke(app, ["--home", str(tmp_path / "other"), "--json", "import", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["imported"] == 1
    (problem,) = summary["problems"]
    assert problem.startswith("agents/default/knowledge.md:") and "repeats agents/default/knowledge.md:" in problem
