"""``engram sync`` run in one agent's view, on a database of every agent: the pass settles the whole
memory folder (the operator's copy of that database), but the agent is told only what its own
folders met (``global/``, ``agents/<agent>/``, its sessions'), and never where in another agent's
folder an entry is. The operator's run (no agent chosen) is told everything. The CLI in-process
against a real home folder (real SQLite file, real files).

Review: ``engram --agent alice sync`` printed the problems found in bob's folder and, for a copy of
bob's entry pasted into alice's file, "id … is also at agents/bob/notes.md:3"; the ``.conflict``
note kept in alice's folder named bob's file too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner
from tests.files.conftest import entry_block, with_copy


def _folder_with_problems_in_both_agents_folders(home: Path) -> str:
    """alice's and bob's memories in one shared database; in the folder, a copy of bob's entry
    edited in alice's file, an edited copy in bob's own file, and a memory file one level too
    deep in each agent's folder. Returns bob's memory id."""
    cli_output(home, "--agent", "bob", "remember", "bob's vault code is 4242", "--key", "vault", "--tags", "notes")
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "notes")
    bob_id = json.loads(cli_output(home, "--agent", "bob", "--json", "get", "vault"))["id"]
    folder = home / "memory"
    bob_notes, alice_notes = folder / "agents/bob/notes.md", folder / "agents/alice/notes.md"
    synced = entry_block(bob_notes.read_text(encoding="utf-8"), bob_id)
    alice_notes.write_text(with_copy(alice_notes.read_text(encoding="utf-8"),
                                     [line.replace("4242", "0000") for line in synced]), encoding="utf-8")
    bob_notes.write_text(with_copy(bob_notes.read_text(encoding="utf-8"),
                                   [line.replace("4242", "9999") for line in synced]), encoding="utf-8")
    for agent in ("alice", "bob"):
        (folder / f"agents/{agent}/deeper").mkdir()
        (folder / f"agents/{agent}/deeper/{agent}-plans.md").write_text("- a plan\n", encoding="utf-8")
    return bob_id


@pytest.mark.parametrize("as_json", [False, True])
def test_an_agents_sync_reports_only_its_own_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     as_json: bool) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")  # one problem a line
    home = tmp_path / "home"
    bob_id = _folder_with_problems_in_both_agents_folders(home)

    said = cli_output(home, "--agent", "alice", *(["--json"] if as_json else []), "sync")

    assert "agents/bob" not in said and "bob-plans" not in said and "9999" not in said
    assert "agents/alice/deeper/alice-plans.md" in said  # her own folder's problem is hers to hear
    assert f"id {bob_id} is also in another agent's folder, which stays the memory" in said
    if as_json:
        report = json.loads(said)
        assert [c.split("/")[:2] for c in report["conflicts"]] == [["agents", "alice"]]
        assert all(rel.startswith(("agents/alice/", "global/")) for rel in report["to_files"]["files_written"])
        assert len(report["problems"]) == 2
    # The note kept in alice's folder does not name bob's file either.
    kept = [p for p in (home / "memory/agents/alice").iterdir() if p.name.endswith(".conflict")]
    assert len(kept) == 1 and "in another agent's folder" in kept[0].read_text(encoding="utf-8")
    assert "agents/bob" not in kept[0].read_text(encoding="utf-8")
    # The sync itself still settled the whole folder: bob's own copy is a conflict in his folder.
    assert [c["file"] for c in json.loads(cli_output(home, "--json", "conflicts"))] == ["agents/alice/notes.md",
                                                                                   "agents/bob/notes.md"]


def test_the_operators_sync_reports_every_folder_with_both_places(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")
    home = tmp_path / "home"
    bob_id = _folder_with_problems_in_both_agents_folders(home)

    said = cli_output(home, "sync")

    assert "agents/alice/deeper/alice-plans.md" in said and "agents/bob/deeper/bob-plans.md" in said
    assert f"agents/alice/notes.md:5: id {bob_id} is also at agents/bob/notes.md:3, which stays the memory" in said
    assert f"agents/bob/notes.md:5: id {bob_id} is also at agents/bob/notes.md:3" in said


def test_all_agents_is_the_operators_run_when_an_agent_is_set_in_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An operator whose shell sets ENGRAM_AGENT had no way to run sync or conflicts as the
    # operator short of unsetting it; --all-agents is that way, as for maintain and export.
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")
    home = tmp_path / "home"
    bob_id = _folder_with_problems_in_both_agents_folders(home)
    monkeypatch.setenv("ENGRAM_AGENT", "alice")

    assert "agents/bob/deeper/bob-plans.md" not in cli_output(home, "sync")  # alice's view, from the environment
    listed = json.loads(cli_output(home, "--json", "conflicts"))
    assert [c["file"] for c in listed] == ["agents/alice/notes.md"]
    every = {c["file"]: c["path"] for c in json.loads(cli_output(home, "--json", "conflicts", "--all-agents"))}
    assert set(every) == {"agents/alice/notes.md", "agents/bob/notes.md"}
    assert "agents/bob/deeper/bob-plans.md" in cli_output(home, "sync", "--all-agents")

    refused = runner.invoke(app, ["--home", str(home), "conflicts", "resolve", every["agents/bob/notes.md"],
                                  "--take", "file"])
    assert refused.exit_code != 0 and "is kept in another agent's folder" in str(refused.exception)
    cli_output(home, "conflicts", "--all-agents", "resolve", every["agents/bob/notes.md"], "--take", "file")
    assert json.loads(cli_output(home, "--agent", "bob", "--json", "get", "vault"))["content"] == "bob's vault code is 9999"
    cli_output(home, "conflicts", "resolve", bob_id, "--take", "db", "--all-agents")
    assert json.loads(cli_output(home, "--json", "conflicts", "--all-agents")) == []

    both = runner.invoke(app, ["--home", str(home), "--agent", "alice", "conflicts", "--all-agents"])
    said = both.exception
    assert isinstance(said, ValidationError) and said.field == "--all-agents" and "--agent chose one" in str(said)
