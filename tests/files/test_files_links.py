"""Links named in memory files: an imported entry's links are made once the whole pass is settled
(the other end may be in a folder read later), one naming no memory is reported with its file and
line, and a link typed into the marker of an entry the database knows is reported as it is taken
out, never lost without a word."""

from __future__ import annotations

import json
from pathlib import Path

from engram.engine import Engram
from engram.files.sync import FileSync
from engram.model import Memory
from tests.files.conftest import run_cli

# Ids no database here has seen: entries of a restored or copied folder.
ALPHA = "0194d3b2-0000-7000-8000-0000000000a1"
BETA = "0194d3b2-0000-7000-8000-0000000000b2"


def _entry(fmt: str, memory_id: str, content: str, links: list[str]) -> str:
    """One entry of a file in ``fmt``, with its id and its links as the format writes them."""
    if fmt == "markdown":
        marker = f"id:{memory_id}" + (" links:" + ",".join(link.replace(" ", "%20").replace("!", "%21")
                                                            for link in links) if links else "")
        return f"- {content} <!-- {marker} -->\n"
    listed = "".join(f"\n      - {link!r}" for link in links)
    return f"  - id: {memory_id}\n    content: {content}\n" + (f"    links:{listed}\n" if links else "")


def _write(folder: Path, rel: str, fmt: str, *entries: str) -> str:
    path = folder / f"{rel}.{'md' if fmt == 'markdown' else 'yaml'}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(("# Notes\n\n" if fmt == "markdown" else "memories:\n") + "".join(entries), encoding="utf-8")
    return path.relative_to(folder).as_posix()


def test_a_link_naming_no_memory_is_reported_with_its_file_and_line(engram: Engram, folder: Path, fmt: str):
    rel = _write(folder, "agents/default/notes", fmt, _entry(fmt, ALPHA, "alpha fact", ["not a key!"]))
    report = FileSync(engram, folder, format=fmt).sync()
    assert [m.id for m in engram.store.iter_all()] == [ALPHA]  # the entry itself is imported
    about = [p for p in report.problems if "not a key!" in p.message]
    assert len(about) == 1, report.problems
    problem = about[0]
    assert problem.path == rel and problem.line == (3 if fmt == "markdown" else 2)  # the entry's first line
    assert ALPHA in problem.message and "links:ID1,ID2" in problem.message and "links: [ID1, ID2]" in problem.message
    # The link and the engine's reason spell it as JSON, as every door does (was Python's 'not a key!').
    assert 'link "not a key!" not made: ' in problem.message and 'not found: "not a key!"' in problem.message
    assert "'not a key!'" not in problem.message, problem.message
    assert engram.get(ALPHA).links == ()


def test_a_link_to_a_memory_in_a_folder_read_later_is_made_without_a_warning(engram: Engram, folder: Path, fmt: str):
    # agents/ folders are settled before global/: alpha's link to beta cannot be made while its own
    # folder is, and beta's entry does not list it back, so only the end of the pass makes it.
    _write(folder, "agents/default/notes", fmt, _entry(fmt, ALPHA, "alpha fact", [BETA]))
    _write(folder, "global/facts", fmt, _entry(fmt, BETA, "beta fact", []))
    report = FileSync(engram, folder, format=fmt).sync()
    assert report.problems == []
    assert report.db_created == 2
    assert engram.get(ALPHA).links == (BETA,)
    assert engram.get(BETA).links == (ALPHA,)


def test_both_ends_listing_a_link_across_folders_make_it_once_without_a_warning(engram: Engram, folder: Path,
                                                                                 fmt: str):
    # The usual restored folder: each end lists the other; a global entry lists an agent's memory.
    _write(folder, "agents/default/notes", fmt, _entry(fmt, ALPHA, "alpha fact", [BETA]))
    _write(folder, "global/facts", fmt, _entry(fmt, BETA, "beta fact", [ALPHA]))
    report = FileSync(engram, folder, format=fmt).sync()
    assert report.problems == []
    assert engram.get(ALPHA).links == (BETA,)


def _two_synced_notes(engram: Engram, folder: Path) -> tuple[FileSync, Memory, Memory, Path]:
    """Two memories synced into the folder's notes file: the syncer, both, and the file."""
    syncer = FileSync(engram, folder)
    alpha = engram.remember("alpha fact", tags=["notes"]).memory
    beta = engram.remember("beta fact", tags=["notes"]).memory
    syncer.sync()
    return syncer, alpha, beta, folder / "agents/default/notes.md"


def test_a_link_typed_into_a_known_entry_is_reported_as_it_is_taken_out(engram: Engram, folder: Path):
    syncer, alpha, beta, path = _two_synced_notes(engram, folder)
    text = path.read_text(encoding="utf-8")
    marker = f"id:{alpha.id} "
    assert marker in text and "links:" not in text
    # A hand edit: a link typed into the marker, and the content changed too.
    path.write_text(text.replace(marker, f"id:{alpha.id} links:{beta.id} ").replace("alpha fact", "alpha fact, edited"),
                    encoding="utf-8")
    report = syncer.sync()
    about = [p for p in report.problems if beta.id in p.message]
    assert len(about) == 1, report.problems
    assert about[0].path == "agents/default/notes.md" and about[0].line == 3
    assert f"engram link {alpha.id}" in about[0].message
    assert engram.get(alpha.id).content == "alpha fact, edited"  # the rest of the edit is taken
    assert engram.get(alpha.id).links == ()
    assert "links:" not in path.read_text(encoding="utf-8")  # the file shows what the database holds
    assert syncer.sync().problems == []  # said once, not at every pass


def test_an_edited_global_entry_keeps_its_link_to_an_agents_memory_without_a_warning(engram: Engram, folder: Path):
    # The folder is the operator's copy: a global entry lists its link to any agent's memory, which
    # the sync's view of global memories may not read; its edit is no dropped link.
    syncer = FileSync(engram, folder)
    shared = engram.remember("shared fact", scope="global", tags=["notes"]).memory
    theirs = engram.for_agent("zed").remember("zed's fact").memory
    engram.for_agent("zed").link(theirs.id, shared.id)
    syncer.sync()
    path = folder / "global/notes.md"
    text = path.read_text(encoding="utf-8")
    assert f"links:{theirs.id}" in text
    path.write_text(text.replace("shared fact", "shared fact, edited"), encoding="utf-8")
    report = syncer.sync()
    assert report.problems == [] and report.db_updated == 1
    assert f"links:{theirs.id}" in path.read_text(encoding="utf-8")
    assert engram.store.get_many([shared.id])[0].links == (theirs.id,)


def test_engram_sync_shows_a_link_naming_no_memory(tmp_path: Path):
    home = tmp_path / "home"
    _write(home / "memory", "agents/default/notes", "markdown", _entry("markdown", ALPHA, "alpha fact", ["nope"]))
    done = run_cli(home, "sync")
    assert "1 created" in done.stdout
    lines = [line for line in done.stderr.splitlines() if '"nope"' in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("skipped: agents/default/notes.md:3: ") and ALPHA in lines[0]


def _linked_pair(engram: Engram, syncer: FileSync) -> tuple[str, str]:
    """Two memories of one file, linked, as a pass wrote them; their ids."""
    alpha = engram.remember("alpha fact", tags=["notes"]).memory
    beta = engram.remember("beta fact", tags=["notes"]).memory
    engram.link(alpha.id, beta.id)
    syncer.sync()
    return alpha.id, beta.id


def test_a_link_to_a_memory_forgotten_while_the_mirror_was_off_is_said_as_that(engram: Engram, folder: Path,
                                                                                 fmt: str):
    syncer = FileSync(engram, folder, format=fmt)  # not attached: the mirror is off
    alpha, beta = _linked_pair(engram, syncer)
    path = folder / f"agents/default/notes.{'md' if fmt == 'markdown' else 'yaml'}"
    assert beta in path.read_text(encoding="utf-8")
    engram.forget(beta)
    report = syncer.sync()
    assert report.files_removed == 1  # beta's entry leaves the file
    about = [p for p in report.problems if beta in p.message]
    assert [p.message for p in about] == [f"entry {alpha}: link to \"{beta}\" is taken out of the file: no memory"
                                          f" \"{beta}\" in the database (forgotten, or never made)"]
    assert about[0].path == path.relative_to(folder).as_posix()
    assert beta not in path.read_text(encoding="utf-8")
    assert syncer.sync().problems == []


def test_a_hand_typed_link_to_no_memory_is_said_as_no_memory_and_one_to_a_memory_as_not_linked(
        engram: Engram, folder: Path):
    syncer, alpha, beta, path = _two_synced_notes(engram, folder)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"id:{alpha.id} ", f"id:{alpha.id} links:{beta.id},{ALPHA} "), encoding="utf-8")
    report = syncer.sync()
    messages = {p.message for p in report.problems}
    assert messages == {
        f"entry {alpha.id}: link \"{beta.id}\" is not the database's and is taken out of the file (links are made"
        f" through engram: engram link {alpha.id} ID; a link names another memory by its id: links:ID1,ID2 in a"
        f" markdown entry's marker, links: [ID1, ID2] in a YAML entry)",
        f"entry {alpha.id}: link to \"{ALPHA}\" is taken out of the file: no memory \"{ALPHA}\" in the database"
        f" (forgotten, or never made)",
    }
    assert engram.get(alpha.id).links == ()
    assert "links:" not in path.read_text(encoding="utf-8")


def test_engram_sync_says_a_link_to_a_memory_forgotten_with_the_mirror_off_names_no_memory(tmp_path: Path):
    home = tmp_path / "home"
    run_cli(home, "remember", "alpha fact", "--key", "alpha", "--tags", "notes")
    run_cli(home, "remember", "beta fact", "--key", "beta", "--tags", "notes")
    run_cli(home, "link", "alpha", "beta")
    beta = json.loads(run_cli(home, "--json", "get", "beta").stdout)["id"]
    assert beta in (home / "memory/agents/default/notes.md").read_text(encoding="utf-8")
    run_cli(home, "forget", "beta", ENGRAM_FILES__ENABLED="false")
    done = run_cli(home, "sync")
    lines = [line for line in done.stderr.splitlines() if beta in line]
    assert len(lines) == 1, done.stderr
    assert f'link to "{beta}" is taken out of the file: no memory "{beta}" in the database' in lines[0]
    assert "engram link" not in lines[0]
