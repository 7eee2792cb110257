"""An id repeated in the memory folder (an entry copied within its file, into another file or into
another scope's folder, then perhaps edited): one copy stays the memory, an identical copy is
dropped, and a differing copy is kept as a ``repeated-id`` conflict, reported with both places.

QA: the sync kept the first copy by file order and made the other a new memory without its key;
a copy whose content was unchanged (other tags, importance...) was taken for a duplicate and
dropped, so the edit was lost; a copy in another scope's folder was kept as a conflict that said
the memory had been forgotten in the database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.files import conflicts
from engram.files.sync import FileSync, SyncReport
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner
from tests.files.conftest import entry_block, with_copy

# Content that must come back byte for byte: a raw marker opening, a typed reference, a tab.
CONTENT = "Uses <!-- in HTML & &#38; café\ttab"
EDITED = CONTENT.replace("café", "crème")


def _suffix(fmt: str) -> str:
    return "md" if fmt == "markdown" else "yaml"






def _new_file(fmt: str, copy: list[str]) -> str:
    return ("# Copies\n\n" if fmt == "markdown" else "memories:\n") + "\n".join(copy) + "\n"


def _texts(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".engram")}


def _conflicts(syncer: FileSync) -> list[conflicts.Conflict]:
    return conflicts.list_conflicts(syncer.folder, syncer.fmt, max_content_chars=8000)


def _quiet(report: SyncReport) -> bool:
    return not report.changed and not report.problems and not report.files_removed


@pytest.fixture
def mirror(engram: Engram, folder: Path, fmt: str) -> FileSync:
    sync = FileSync(engram, folder, format=fmt)
    sync.attach()
    yield sync
    sync.detach()


@pytest.mark.parametrize("where", ["same file", "other file"])
def test_an_identical_copy_is_dropped_with_only_the_summary_saying_so(
    engram: Engram, mirror: FileSync, folder: Path, fmt: str, where: str
) -> None:
    memory = engram.remember(CONTENT, tags="notes").memory
    engram.remember("another fact", tags="notes")
    notes = folder / f"agents/default/notes.{_suffix(fmt)}"
    synced = notes.read_text(encoding="utf-8")
    copy = entry_block(synced, memory.id)
    if where == "same file":
        notes.write_text(with_copy(synced, copy), encoding="utf-8")
    else:
        (folder / f"agents/default/a-copy.{_suffix(fmt)}").write_text(_new_file(fmt, copy), encoding="utf-8")

    report = mirror.sync()

    assert (report.db_created, report.db_updated, report.db_forgotten, report.files_removed) == (0, 0, 0, 1)
    assert report.conflicts == [] and report.problems == []
    assert notes.read_text(encoding="utf-8") == synced  # the entry as it was, once
    assert [(m.id, m.content) for m in engram.list(order="oldest")][0] == (memory.id, CONTENT)
    assert engram.count() == 2 and _conflicts(mirror) == []
    texts = _texts(folder)
    assert _quiet(mirror.sync()) and _texts(folder) == texts


@pytest.mark.parametrize("where", ["same file", "other file"])
def test_an_edited_copy_becomes_a_conflict_naming_both_places_and_can_be_taken(
    engram: Engram, mirror: FileSync, folder: Path, fmt: str, where: str
) -> None:
    memory = engram.remember(CONTENT, tags="notes").memory
    engram.remember("another fact", tags="notes")
    rel = f"agents/default/notes.{_suffix(fmt)}"
    synced = (folder / rel).read_text(encoding="utf-8")
    copy = [line.replace("café", "crème") for line in entry_block(synced, memory.id)]
    if where == "same file":
        copy_rel = rel
        (folder / rel).write_text(with_copy(synced, copy), encoding="utf-8")
    else:  # a file read before the entry's own: the entry the state recorded still stays the memory
        copy_rel = f"agents/default/a-copy.{_suffix(fmt)}"
        (folder / copy_rel).write_text(_new_file(fmt, copy), encoding="utf-8")
    lines = (folder / copy_rel).read_text(encoding="utf-8").split("\n")
    copy_line = max(i for i, line in enumerate(lines) if line == copy[0]) + 1  # the copy is the last one
    kept_line = synced.split("\n").index(entry_block(synced, memory.id)[0]) + 1

    report = mirror.sync()

    assert (report.db_created, report.db_updated, report.db_forgotten, report.files_removed) == (0, 0, 0, 1)
    assert engram.count() == 2 and engram.get(memory.id).content == CONTENT  # nothing decided for the person
    assert (folder / rel).read_text(encoding="utf-8") == synced
    assert "crème" not in (folder / copy_rel).read_text(encoding="utf-8")
    [kept] = _conflicts(mirror)
    assert (kept.entry_id, kept.kind, kept.file, kept.path) == (memory.id, "repeated-id", copy_rel, report.conflicts[0])
    assert kept.entries[0].content == EDITED  # byte for byte
    [problem] = report.problems
    assert (problem.path, problem.line) == (copy_rel, copy_line)
    assert f"also at {rel}:{kept_line}" in problem.message and kept.path in problem.message
    texts = _texts(folder)
    assert _quiet(mirror.sync()) and _texts(folder) == texts  # no new conflict, no rewrite

    conflicts.resolve(engram, mirror.folder, kept, "file")
    mirror.sync()
    assert engram.get(memory.id).content == EDITED and engram.count() == 2
    assert "crème" in (folder / rel).read_text(encoding="utf-8") and _conflicts(mirror) == []
    texts = _texts(folder)
    assert _quiet(mirror.sync()) and _texts(folder) == texts


def test_a_copy_differing_only_in_tags_is_kept_not_taken_for_a_duplicate(
    engram: Engram, mirror: FileSync, folder: Path, fmt: str
) -> None:
    memory = engram.remember(CONTENT, tags="notes", importance=0.5).memory
    rel = f"agents/default/notes.{_suffix(fmt)}"
    copy = entry_block((folder / rel).read_text(encoding="utf-8"), memory.id)
    copy = [line.replace("- notes", "- notes\n  - urgent") if fmt == "yaml" else line.replace(
        "tags: notes", "tags: notes, urgent") for line in copy]
    (folder / f"agents/default/urgent.{_suffix(fmt)}").write_text(_new_file(fmt, copy), encoding="utf-8")
    report = mirror.sync()
    [kept] = _conflicts(mirror)
    assert kept.entries[0].tags == ("notes", "urgent") and kept.entries[0].content == CONTENT
    assert report.problems[0].path == f"agents/default/urgent.{_suffix(fmt)}"
    assert engram.get(memory.id).tags == ("notes",)


def test_the_copy_as_last_synced_holds_the_id_so_no_edit_is_applied_silently(
    engram: Engram, syncer: FileSync, folder: Path
) -> None:
    """The original edited where it is and an unedited copy below it: which of the two is the memory
    is the person's to say, so the edit waits in a conflict instead of winning by file order."""
    memory = engram.remember(CONTENT, tags="notes").memory
    rel = "agents/default/notes.md"
    synced = (folder / rel).read_text(encoding="utf-8")
    original = entry_block(synced, memory.id)
    edited = synced.replace(original[0], original[0].replace("café", "crème"))
    (folder / rel).write_text(with_copy(edited, original), encoding="utf-8")
    report = syncer.sync()
    assert engram.get(memory.id).content == CONTENT and report.db_updated == 0
    [kept] = _conflicts(syncer)
    assert kept.entries[0].content == EDITED
    [problem] = report.problems
    assert problem.line == 3 and f"is also at {rel}:5," in problem.message
    assert "crème" not in (folder / rel).read_text(encoding="utf-8")
    assert _quiet(syncer.sync())


def test_without_a_record_the_first_copy_is_stored_and_the_other_kept(tmp_path: Path, fmt: str) -> None:
    """A folder brought to a new database (no sync state): the first copy by file order is imported."""
    with Engram.from_settings(home=tmp_path / "old", files={"enabled": False}) as old:
        FileSync(old, tmp_path / "old/memory", format=fmt).attach()
        memory = old.remember(CONTENT, tags="notes").memory
    rel = f"agents/default/notes.{_suffix(fmt)}"
    synced = (tmp_path / "old/memory" / rel).read_text(encoding="utf-8")
    copy = [line.replace("café", "crème") for line in entry_block(synced, memory.id)]
    folder = tmp_path / "new/memory"
    (folder / "agents/default").mkdir(parents=True)
    (folder / rel).write_text(with_copy(synced, copy), encoding="utf-8")
    with Engram.from_settings(home=tmp_path / "new", files={"enabled": False}) as new:
        syncer = FileSync(new, folder, format=fmt)
        report = syncer.sync()
        assert report.db_created == 1 and new.count() == 1 and new.get(memory.id).content == CONTENT
        assert [(c.kind, c.entries[0].content) for c in _conflicts(syncer)] == [("repeated-id", EDITED)]
        assert (folder / rel).read_text(encoding="utf-8") == synced
        assert _quiet(syncer.sync())


@pytest.mark.parametrize("edited", [True, False])
def test_a_copy_in_another_scope_folder_stays_out_of_that_scope(
    engram: Engram, mirror: FileSync, folder: Path, fmt: str, edited: bool
) -> None:
    memory = engram.remember(CONTENT, tags="notes").memory
    synced = (folder / f"agents/default/notes.{_suffix(fmt)}").read_text(encoding="utf-8")
    copy = [line.replace("café", "crème") if edited else line for line in entry_block(synced, memory.id)]
    (folder / "global").mkdir()
    copy_rel = f"global/notes.{_suffix(fmt)}"
    (folder / copy_rel).write_text(_new_file(fmt, copy), encoding="utf-8")
    report = mirror.sync()
    assert engram.list(scope="global") == [] and engram.get(memory.id).content == CONTENT
    assert memory.id not in (folder / copy_rel).read_text(encoding="utf-8")
    assert report.files_removed == 1 and report.db_forgotten == 0
    kept = _conflicts(mirror)
    if edited:
        assert [(c.kind, c.file, c.entries[0].content) for c in kept] == [("repeated-id", copy_rel, EDITED)]
        assert report.problems[0].path == copy_rel and "also at agents/default/notes" in report.problems[0].message
    else:
        assert kept == [] and report.problems == []
    assert _quiet(mirror.sync())


def test_an_entry_moved_to_another_scope_folder_is_still_moved(engram: Engram, syncer: FileSync, folder: Path) -> None:
    memory = engram.remember(CONTENT, tags="notes").memory
    rel = "agents/default/notes.md"
    synced = (folder / rel).read_text(encoding="utf-8")
    block = entry_block(synced, memory.id)
    (folder / rel).write_text(synced.replace("\n".join(block) + "\n", ""), encoding="utf-8")
    (folder / "global").mkdir()
    (folder / "global/notes.md").write_text(_new_file("markdown", block), encoding="utf-8")
    syncer.sync()
    assert [m.content for m in engram.list(scope="global")] == [CONTENT] and _conflicts(syncer) == []


def test_a_copy_of_one_agents_entry_in_anothers_folder_gives_that_agent_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Engram.from_settings(home=home, agent="alice", files={"enabled": False}) as alice:
        syncer = FileSync(alice, home / "memory")
        syncer.attach()
        memory = alice.remember(CONTENT, tags="notes").memory
        copy = [line.replace("café", "crème") for line in
                entry_block((home / "memory/agents/alice/notes.md").read_text(encoding="utf-8"), memory.id)]
        (home / "memory/agents/bob").mkdir(parents=True)
        (home / "memory/agents/bob/notes.md").write_text(_new_file("markdown", copy), encoding="utf-8")
        syncer.sync()
        assert alice.for_agent("bob").list() == [] and alice.get(memory.id).content == CONTENT
        assert [(c.kind, c.file) for c in _conflicts(syncer)] == [("repeated-id", "agents/bob/notes.md")]


def test_per_agent_databases_leave_another_agents_copy_to_that_agent(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    home = tmp_path / "home"
    cli_output(home, "--agent", "alice", "remember", CONTENT, "--key", "k", "--tags", "notes")
    memory_id = json.loads(cli_output(home, "--agent", "alice", "--json", "get", "k"))["id"]
    bob_notes = home / "memory/agents/bob/notes.md"
    bob_notes.parent.mkdir(parents=True)
    copy = entry_block((home / "memory/agents/alice/notes.md").read_text(encoding="utf-8"), memory_id)
    bob_notes.write_text(_new_file("markdown", [line.replace("café", "crème") for line in copy]), encoding="utf-8")
    before = bob_notes.read_text(encoding="utf-8")
    out = json.loads(cli_output(home, "--agent", "alice", "--json", "sync"))
    assert out["conflicts"] == [] and out["problems"] == [] and bob_notes.read_text(encoding="utf-8") == before
    assert not list(home.glob("memory/**/*.conflict"))




def test_cli_sync_names_the_copy_and_the_entry_it_repeats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")  # one problem a line
    home = tmp_path / "home"
    cli_output(home, "remember", CONTENT, "--key", "k", "--tags", "notes")
    memory_id = json.loads(cli_output(home, "--json", "get", "k"))["id"]
    notes = home / "memory/agents/default/notes.md"
    copy = [line.replace("café", "crème") for line in entry_block(notes.read_text(encoding="utf-8"), memory_id)]
    notes.write_text(with_copy(notes.read_text(encoding="utf-8"), copy), encoding="utf-8")

    out = cli_output(home, "sync")

    kept = f"agents/default/notes.md.{memory_id}.conflict"
    assert f"agents/default/notes.md:5: id {memory_id} is also at agents/default/notes.md:3" in out
    assert kept in out and f"engram conflicts resolve {memory_id} --take file" in out
    assert "0 created, 0 updated, 0 forgotten" in out and "1 removed" in out
    listed = json.loads(cli_output(home, "--json", "conflicts"))
    assert [(c["kind"], c["file_version"]) for c in listed] == [("repeated-id", [EDITED])]
    again = json.loads(cli_output(home, "--json", "sync"))
    assert again["conflicts"] == again["problems"] == [] and again["to_files"]["files_written"] == []
    cli_output(home, "conflicts", "resolve", memory_id, "--take", "file")
    assert json.loads(cli_output(home, "--json", "get", "k"))["content"] == EDITED
    assert json.loads(cli_output(home, "--json", "conflicts")) == []


def test_the_watcher_keeps_an_edited_copy_once_and_settles(engram: Engram, syncer: FileSync, folder: Path) -> None:
    from engram.files.sync import wait_for
    from engram.files.watcher import Watcher

    memory = engram.remember(CONTENT, tags="notes").memory
    notes = folder / "agents/default/notes.md"
    synced = notes.read_text(encoding="utf-8")
    copy = [line.replace("café", "crème") for line in entry_block(synced, memory.id)]
    reports: list[SyncReport] = []
    with Watcher(syncer, debounce_s=0.05, poll_interval_s=0.2, on_report=reports.append) as watcher:
        notes.write_text(with_copy(synced, copy), encoding="utf-8")
        assert wait_for(lambda: len(_conflicts(syncer)) == 1)
        settled = watcher.passes
        assert wait_for(lambda: watcher.passes >= settled + 2)  # polls after it: nothing more to do
    assert notes.read_text(encoding="utf-8") == synced and engram.get(memory.id).content == CONTENT
    assert [c.entries[0].content for c in _conflicts(syncer)] == [EDITED]
    assert sum(len(r.conflicts) for r in reports) == 1 and sum(len(r.problems) for r in reports) == 1


def test_another_agents_id_in_an_agents_file_becomes_that_agents_own_copy(tmp_path: Path) -> None:
    # alice's memory is not in the folder yet (written with files off); aaa's file carries its id
    # with other text. aaa's scope comes first in a pass: its copy gets an id of its own, and the
    # entry in aaa's file must carry that id. The sync recorded alice's id at aaa's file instead
    # (looking the id up in the whole store), so alice's entry was not written to her folder, and
    # the next pass kept aaa's text as a conflict saying it "was forgotten in the database".
    home = tmp_path / "home"
    with Engram.from_settings(home=home, agent="alice", files={"enabled": False}) as alice:
        memory = alice.remember("the vault code is 4242", key="vault", tags="notes").memory
        syncer = FileSync(alice, home / "memory")
        aaa_notes = home / "memory/agents/aaa/notes.md"
        aaa_notes.parent.mkdir(parents=True)
        aaa_notes.write_text(f"# Notes\n\n- the vault code is 0000 <!-- id:{memory.id} key:vault -->\n", encoding="utf-8")
        first = syncer.sync()
        second = syncer.sync()
        [copy] = alice.for_agent("aaa").list()
        assert copy.id != memory.id and copy.content == "the vault code is 0000"
        assert alice.get(memory.id).content == "the vault code is 4242"
        assert copy.id in aaa_notes.read_text(encoding="utf-8") and memory.id not in aaa_notes.read_text(encoding="utf-8")
        assert memory.id in (home / "memory/agents/alice/notes.md").read_text(encoding="utf-8")
        assert first.conflicts == second.conflicts == [] and _conflicts(syncer) == []
        assert _quiet(second)


def test_a_conflict_on_another_agents_id_says_it_is_no_memory_of_that_folder_and_never_reaches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder synced by earlier builds can hold a sync state recording alice's id at aaa's file
    # (see the test above). The pass then kept aaa's text as a conflict saying the entry "was
    # forgotten in the database", and `engram conflicts` showed alice's memory as its database
    # side, which `--take file` overwrote with aaa's text. The note must say what is true without
    # telling that the id is alice's (the same words as for an id nobody holds), and resolving it
    # must stay in aaa's folder.
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")
    home = tmp_path / "home"
    cli_output(home, "--agent", "alice", "remember", "the vault code is 4242", "--key", "vault", "--tags", "notes")
    alice_id = json.loads(cli_output(home, "--agent", "alice", "--json", "get", "vault"))["id"]
    nobody_id = alice_id[:-4] + ("0000" if not alice_id.endswith("0000") else "1111")
    aaa_notes = home / "memory/agents/aaa/notes.md"
    aaa_notes.parent.mkdir(parents=True)
    aaa_notes.write_text(f"# Notes\n\n- the vault code is 0000 <!-- id:{alice_id} key:vault -->\n"
                         f"- a note of nobody's <!-- id:{nobody_id} key:nobody -->\n", encoding="utf-8")
    state_path = home / "memory/.engram-sync.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    state["entries"].update({alice_id: ["agents/aaa/notes.md", "0" * 20], nobody_id: ["agents/aaa/notes.md", "0" * 20]})
    state_path.write_text(json.dumps(state), encoding="utf-8")
    (home / "memory/.engram-sync.journal").unlink(missing_ok=True)

    cli_output(home, "--agent", "aaa", "sync")

    kept = {c["id"]: c for c in json.loads(cli_output(home, "--json", "conflicts"))}
    assert set(kept) == {alice_id, nobody_id} and {c["kind"] for c in kept.values()} == {"deleted-in-database"}
    notes = {i: (home / "memory" / kept[i]["path"]).read_text(encoding="utf-8").split("\n")[0] for i in kept}
    said = notes[alice_id].split("This entry was ", 1)[1]
    assert said == notes[nobody_id].split("This entry was ", 1)[1].replace(nobody_id, alice_id)
    assert said.startswith("changed in the file, but it is not a memory of agents/aaa/ in the database")
    assert "forgotten in the database" not in said and "alice" not in said
    listed = cli_output(home, "conflicts")
    assert "4242" not in listed and listed.count("database: (forgotten)") == 2

    cli_output(home, "conflicts", "resolve", alice_id, "--take", "file")
    assert json.loads(cli_output(home, "--agent", "alice", "--json", "get", "vault"))["content"] == "the vault code is 4242"
    restored = json.loads(cli_output(home, "--agent", "aaa", "--json", "list"))
    assert [m["content"] for m in restored] == ["the vault code is 0000"] and restored[0]["id"] != alice_id


def test_an_agent_never_settles_a_copy_of_another_agents_memory_onto_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Review: bob's id pasted into a line of alice's file made a repeated-id conflict, and
    # `engram --agent alice conflicts resolve ID --take file` wrote alice's text into bob's memory;
    # `engram --agent alice conflicts` listed bob's own conflicts and showed bob's memory. One agent
    # never changes (nor reads) another's memories: only the operator's run settles it onto bob's.
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    monkeypatch.setenv("COLUMNS", "400")
    home = tmp_path / "home"
    cli_output(home, "--agent", "bob", "remember", "bob's vault code is 4242", "--key", "vault", "--tags", "notes")
    cli_output(home, "--agent", "alice", "remember", "alice likes tea", "--key", "tea", "--tags", "notes")
    bob_id = json.loads(cli_output(home, "--agent", "bob", "--json", "get", "vault"))["id"]
    bob_notes, alice_notes = home / "memory/agents/bob/notes.md", home / "memory/agents/alice/notes.md"
    synced = entry_block(bob_notes.read_text(encoding="utf-8"), bob_id)
    pasted = [line.replace("4242", "0000") for line in synced]
    alice_notes.write_text(with_copy(alice_notes.read_text(encoding="utf-8"), pasted), encoding="utf-8")
    # And a conflict of bob's own (an edited copy in his file), whose text alice must not see.
    bob_copy = [line.replace("4242", "bob's own secret 9999") for line in synced]
    bob_notes.write_text(with_copy(bob_notes.read_text(encoding="utf-8"), bob_copy), encoding="utf-8")

    cli_output(home, "--agent", "alice", "sync")

    def bobs() -> str:
        return json.loads(cli_output(home, "--agent", "bob", "--json", "get", "vault"))["content"]

    assert bobs() == "bob's vault code is 4242"  # the sync itself never applies alice's line to bob's memory
    every = {c["file"]: c for c in json.loads(cli_output(home, "--json", "conflicts"))}
    assert set(every) == {"agents/alice/notes.md", "agents/bob/notes.md"}
    listed = json.loads(cli_output(home, "--agent", "alice", "--json", "conflicts"))
    assert [(c["file"], c["file_version"]) for c in listed] == [("agents/alice/notes.md", ["bob's vault code is 0000"])]
    plain = cli_output(home, "--agent", "alice", "conflicts")
    assert "4242" not in plain and "9999" not in plain and "(another agent's memory, not shown)" in plain

    for take in ("file", "merge"):
        refused = runner.invoke(app, ["--home", str(home), "--agent", "alice", "conflicts", "resolve", bob_id,
                                      "--take", take, "--content", "merged by alice"])
        said = refused.exception
        assert isinstance(said, ValidationError) and said.field == "conflict" and "--take db" in said.allowed
        assert f"{bob_id} ({every['agents/alice/notes.md']['path']}) competes with another agent's memory" in str(said)
    refused = runner.invoke(app, ["--home", str(home), "--agent", "alice", "conflicts", "resolve",
                                  every["agents/bob/notes.md"]["path"], "--take", "file"])
    assert isinstance(refused.exception, ValidationError) and "is kept in another agent's folder" in str(refused.exception)
    assert bobs() == "bob's vault code is 4242"
    assert len(json.loads(cli_output(home, "--json", "conflicts"))) == 2  # nothing settled, nothing dropped

    # Dropping the copy kept in her own folder changes nothing of bob's: alice may.
    cli_output(home, "--agent", "alice", "conflicts", "resolve", bob_id, "--take", "db")
    assert json.loads(cli_output(home, "--agent", "alice", "--json", "conflicts")) == []
    # The operator's run (no agent chosen) still settles bob's own conflict onto his memory.
    cli_output(home, "conflicts", "resolve", bob_id, "--take", "file")
    assert bobs() == "bob's vault code is bob's own secret 9999"
