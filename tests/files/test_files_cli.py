"""The CLI commands of the memory folder, run in-process against a real home folder."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from engram.errors import NotFoundError, ValidationError
from engram.interfaces.cli.app import app
from tests.files.conftest import run_cli

runner = CliRunner()


def _run(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_writes_reach_files_and_sync_reports_each_direction(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(home, "remember", "User prefers Python", "--tags", "preferences")
    prefs = home / "memory/agents/default/preferences.md"
    assert "User prefers Python" in prefs.read_text()
    prefs.write_text(prefs.read_text() + "- Added in the editor\n", encoding="utf-8")
    out = json.loads(_run(home, "--json", "sync"))
    assert out["to_database"] == {"created": 1, "updated": 0, "forgotten": 0, "moved": 0}
    assert out["to_files"]["files_written"] == ["agents/default/preferences.md"]
    listed = json.loads(_run(home, "--json", "list"))
    assert {m["content"] for m in listed} == {"User prefers Python", "Added in the editor"}


def test_cli_conflicts_list_and_resolve(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(home, "remember", "original", "--key", "k", "--tags", "notes")
    notes = home / "memory/agents/default/notes.md"
    notes.write_text(notes.read_text().replace("- original (", "- file side ("), encoding="utf-8")
    # A database write whose event pass finds the pending file edit: a conflict.
    _run(home, "remember", "database side", "--key", "k", "--tags", "notes")
    listed = json.loads(_run(home, "--json", "conflicts"))
    assert [(c["kind"], c["file_version"]) for c in listed] == [("both-changed", ["file side"])]
    assert "database side" in notes.read_text()
    # A merge with no text is the engine's refusal, naming the options that give it (the engine's
    # "the content to keep" named none), and settles nothing.
    for blank in ((), ("--content", "  ")):
        refused = runner.invoke(app, ["--home", str(home), "conflicts", "resolve", listed[0]["id"][:13], "--take", "merge",
                                      *blank])
        # (in process the error itself comes out; ``engram`` prints it and exits 2)
        assert isinstance(refused.exception, ValidationError), refused.output
        assert str(refused.exception) == ("--content: a merge needs the merged text "
                                          "(allowed: --content TEXT, or --edit to write it in $EDITOR)")
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "database side"
    assert len(json.loads(_run(home, "--json", "conflicts"))) == 1
    _run(home, "conflicts", "resolve", listed[0]["id"][:13], "--take", "merge", "--content", "merged text")
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "merged text"
    assert "merged text" in notes.read_text()
    assert json.loads(_run(home, "--json", "conflicts")) == []


def test_cli_export_formats_and_folder_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(home, "remember", "I used WebTool", "--type", "experience", "--tags", "tools")
    _run(home, "remember", "Global fact", "--scope", "global")
    snapshot = json.loads(_run(home, "export"))  # the default is still the JSON snapshot
    assert snapshot["format"] == "engram-snapshot"
    for fmt in ("markdown", "yaml", "json"):
        _run(home, "export", "--format", fmt, str(tmp_path / fmt))
    assert (tmp_path / "markdown/agents/default/tools.md").exists()
    assert (tmp_path / "yaml/global/knowledge.yaml").exists()
    assert len(list((tmp_path / "json/experience").glob("*.json"))) == 1
    for fmt in ("markdown", "yaml", "json"):
        fresh = tmp_path / f"fresh-{fmt}"
        out = _run(fresh, "import", str(tmp_path / fmt))
        assert "imported 2 with their ids" in out
        assert sorted(m["id"] for m in snapshot["memories"]) == sorted(
            m["id"] for m in json.loads(_run(fresh, "--json", "list")))


def test_cli_merge_of_a_conflict_whose_both_sides_are_gone_names_the_memory(tmp_path: Path) -> None:
    """A merge needs one side's fields: the file deleted the entry and the database forgot it
    since. The refusal names the memory by its id (it read ``memory not found: "the conflicting
    entry"``, a description where the id goes), and the conflict is kept for --take db or file."""
    home = tmp_path / "home"
    _run(home, "remember", "original", "--key", "k", "--tags", "notes")
    notes = home / "memory/agents/default/notes.md"
    notes.write_text("".join(line for line in notes.read_text().splitlines(True) if "original" not in line), encoding="utf-8")
    _run(home, "remember", "database side", "--key", "k", "--tags", "notes")  # meets the deletion: deleted-in-file
    [conflict] = json.loads(_run(home, "--json", "conflicts"))
    assert (conflict["kind"], conflict["file_version"]) == ("deleted-in-file", [])
    _run(home, "forget", "k")
    result = runner.invoke(app, ["--home", str(home), "conflicts", "resolve", conflict["id"], "--take", "merge",
                                 "--content", "merged text"])
    assert result.exit_code != 0
    assert isinstance(result.exception, NotFoundError), result.output
    assert str(result.exception) == f'memory not found: "{conflict["id"]}"'
    assert result.exception.ref == conflict["id"]
    assert [c["id"] for c in json.loads(_run(home, "--json", "conflicts"))] == [conflict["id"]]
    assert json.loads(_run(home, "--json", "count")) == {"count": 0}


def _both_changed(home: Path, file_text: str) -> Path:
    """A both-changed conflict on the memory "k" of the default agent, ``file_text`` kept; its .conflict file."""
    _run(home, "remember", "original", "--key", "k", "--tags", "notes")
    notes = home / "memory/agents/default/notes.md"
    notes.write_text(notes.read_text().replace("- original (", f"- {file_text} ("), encoding="utf-8")
    _run(home, "remember", "database side", "--key", "k", "--tags", "notes")
    [kept] = list(notes.parent.glob("*.conflict"))
    return kept


def test_cli_conflicts_says_why_a_kept_version_is_unreadable(tmp_path: Path) -> None:
    # A version longer than max_content_chars (set lower since it was kept) was listed as
    # "file_version": [] and "(deleted)": as if the file had deleted the entry.
    home = tmp_path / "home"
    _both_changed(home, "a file side of forty characters or so ...")
    result = runner.invoke(app, ["--home", str(home), "--json", "conflicts"], env={"ENGRAM_MAX_CONTENT_CHARS": "10"})
    assert result.exit_code == 0, result.output
    [listed] = json.loads(result.output)
    assert listed["file_version"] == [] and len(listed["unreadable"]) == 1
    assert listed["unreadable"][0].endswith("content: is 41 characters; the maximum is 10 (allowed: 1-10 characters)"), listed
    shown = runner.invoke(app, ["--home", str(home), "conflicts"], env={"ENGRAM_MAX_CONTENT_CHARS": "10", "COLUMNS": "400"})
    assert "file:     (unreadable: " in shown.output and "(deleted)" not in shown.output
    assert json.loads(_run(home, "--json", "conflicts"))[0]["unreadable"] == []


def test_cli_conflicts_lists_the_others_when_one_conflict_file_is_not_utf8(tmp_path: Path) -> None:
    # A .conflict file a hand edit left in another encoding ended the whole listing with an error
    # naming it: no other conflict could be seen. It is listed as unreadable, and --take db drops it.
    home = tmp_path / "home"
    kept = _both_changed(home, "file side")
    broken = kept.parent / "notes.md.0badc0de.conflict"
    broken.write_bytes(b"\xff\xfe engram-conflict id=0badc0de")
    listed = {c["id"]: c for c in json.loads(_run(home, "--json", "conflicts"))}
    assert listed.keys() == {kept.name.split(".")[2], "0badc0de"}
    assert listed["0badc0de"]["unreadable"] == ["agents/default/notes.md.0badc0de.conflict: is not UTF-8 (byte 0)"]
    assert listed["0badc0de"]["file"] == "agents/default/notes.md" and listed["0badc0de"]["file_version"] == []
    _run(home, "conflicts", "resolve", "0badc0de", "--take", "db")
    assert not broken.exists() and kept.exists()


def test_cli_conflicts_names_the_file_the_conflict_is_kept_beside_after_its_folder_was_renamed(tmp_path: Path) -> None:
    # A note kept before its folder was renamed (agents/Default/ by an earlier version, now
    # agents/default/) still says file=agents/Default/notes.md; the listing showed that stale path.
    home = tmp_path / "home"
    kept = _both_changed(home, "file side")
    kept.write_text(kept.read_text().replace("file=agents/default/notes.md", "file=agents/Default/notes.md"), encoding="utf-8")
    [listed] = json.loads(_run(home, "--json", "conflicts"))
    assert listed["file"] == "agents/default/notes.md"
    _run(home, "conflicts", "resolve", listed["id"], "--take", "file")
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "file side"


def test_cli_sync_with_memory_off_leaves_the_folder_as_it_is(tmp_path: Path) -> None:
    """With memory turned off (backend = disabled), `engram sync` took the folder's entries into a
    store that keeps nothing and wrote them back without their ids (memory on again, the next sync
    stored each a second time), and in a new home made the folder and its sync state. It does
    nothing now and says memory is off, as `history show` does; `watch` stops at once."""
    home = tmp_path / "home"
    run_cli(home, "remember", "the deploy runs at noon", "--tags", "ops")
    run_cli(home, "sync")
    before = {p: p.read_bytes() for p in (home / "memory").rglob("*") if p.is_file()}
    assert b"<!-- id:" in before[home / "memory/agents/default/ops.md"]
    (home / "config.toml").write_text('backend = "disabled"\n')  # as docs/configuration.md turns memory off
    done = run_cli(home, "sync")
    assert done.stdout == "" and done.stderr.startswith("nothing synced: memory is off (backend = disabled)"), done
    assert json.loads(run_cli(home, "--json", "sync").stdout)["off"].startswith("memory is off")
    watched = run_cli(home, "watch", "--duration", "30")
    assert watched.stderr.startswith("nothing synced: memory is off") and "watching" not in watched.stderr
    assert {p: p.read_bytes() for p in (home / "memory").rglob("*") if p.is_file()} == before
    (home / "config.toml").unlink()
    # Memory on again: the folder is the one memory still, not a second copy of it.
    assert json.loads(run_cli(home, "--json", "sync").stdout)["to_database"]["created"] == 0
    assert run_cli(home, "count").stdout.strip() == "1"
    # A new home with memory off: no folder, no sync state.
    new = tmp_path / "new"
    new.mkdir()
    (new / "config.toml").write_text('backend = "disabled"\n')
    assert run_cli(new, "sync").stderr.startswith("nothing synced: memory is off")
    assert sorted(p.name for p in new.iterdir()) == ["config.toml"]


def test_cli_conflicts_with_memory_off_leave_the_folder_as_it_is(tmp_path: Path) -> None:
    """With memory turned off, `engram conflicts` listed the kept conflicts against a database side
    "(forgotten)", and `conflicts resolve` settled them into a store that keeps nothing: `--take
    file` and `--take merge` said "applied" and deleted the .conflict file, the file's version lost
    with it. Both now leave the folder as `sync` does and say that memory is off; the editor of
    `--edit` is not started. Memory on again, the conflict is there to resolve."""
    home = tmp_path / "home"
    _both_changed(home, "file side")
    [listed] = json.loads(_run(home, "--json", "conflicts"))
    before = {p: p.read_bytes() for p in (home / "memory").rglob("*") if p.is_file()}
    (home / "config.toml").write_text('backend = "disabled"\n')
    shown = run_cli(home, "conflicts")
    assert shown.stdout == "" and shown.stderr.startswith("no conflicts listed: memory is off (backend = disabled)"), shown
    as_json = run_cli(home, "--json", "conflicts")
    assert json.loads(as_json.stdout) == [] and "memory is off" in as_json.stderr
    marker = tmp_path / "editor-ran"
    editor = _editor(tmp_path, "marks.py", f"Path({str(marker)!r}).write_text('ran')")
    for take in (("db",), ("file",), ("merge", "--content", "merged"), ("merge", "--edit")):
        done = run_cli(home, "conflicts", "resolve", listed["id"], "--take", *take, EDITOR=editor)
        assert done.stdout == "" and done.stderr.startswith("nothing resolved: memory is off (backend = disabled)"), done
    done = json.loads(run_cli(home, "--json", "conflicts", "resolve", listed["id"], "--take", "file").stdout)
    assert done["resolved"] is None and done["off"].startswith("memory is off"), done
    assert not marker.exists()
    assert {p: p.read_bytes() for p in (home / "memory").rglob("*") if p.is_file()} == before
    (home / "config.toml").unlink()
    assert [c["id"] for c in json.loads(_run(home, "--json", "conflicts"))] == [listed["id"]]
    resolved = json.loads(run_cli(home, "--json", "conflicts", "resolve", listed["id"], "--take", "file").stdout)
    assert resolved == {"resolved": listed["id"], "done": "applied the file version", "off": None}
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "file side"
    # A new home with memory off: nothing made by either.
    new = tmp_path / "new"
    new.mkdir()
    (new / "config.toml").write_text('backend = "disabled"\n')
    run_cli(new, "conflicts")
    run_cli(new, "conflicts", "resolve", "some-id", "--take", "file")
    assert sorted(p.name for p in new.iterdir()) == ["config.toml"]


def _editor(tmp_path: Path, name: str, body: str) -> str:
    """A real editor for ``--edit``: a Python script the CLI runs on its temporary file; the EDITOR value running it."""
    script = tmp_path / name
    script.write_text(f"import sys\nfrom pathlib import Path\nargs = sys.argv[1:]\n{body}\n", encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def _merge_editing(home: Path, ref: str, editor: str) -> subprocess.CompletedProcess[str]:
    """``engram conflicts resolve REF --take merge --edit`` as a process with EDITOR ``editor`` (VISUAL unset)."""
    env = {**os.environ, "ENGRAM_EMBEDDINGS__PROVIDER": "none", "EDITOR": editor}
    for name in ("VISUAL", "ENGRAM_CONFIG", "ENGRAM_BACKEND", "ENGRAM_PATH", "ENGRAM_AGENT", "ENGRAM_DATABASE_URL"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "engram", "--home", str(home), "conflicts", "resolve", ref, "--take",
                           "merge", "--edit"], capture_output=True, text=True, env=env, timeout=120)


def test_cli_merge_edit_runs_the_editor_and_keeps_what_it_wrote(tmp_path: Path) -> None:
    """``--take merge --edit`` crashed (``typer.edit`` is gone from Typer 0.29). The text is written in
    $EDITOR, a command with arguments ("code --wait") too, read back as written above the scissors line;
    an editor that fails, cannot be started, or leaves nothing changes nothing and exits 2."""
    home = tmp_path / "home"
    _both_changed(home, "file side")
    [listed] = json.loads(_run(home, "--json", "conflicts"))
    # An editor that fails (exit 1) after writing: refused on --edit, memory and conflict as they were.
    done = _merge_editing(home, listed["id"], _editor(tmp_path, "fail.py", "Path(args[-1]).write_text('half')\nsys.exit(1)"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--edit: $EDITOR" in done.stderr and "exited with status 1" in done.stderr
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "database side"
    assert [c["id"] for c in json.loads(_run(home, "--json", "conflicts"))] == [listed["id"]]
    # An editor not found is named.
    done = _merge_editing(home, listed["id"], str(tmp_path / "no-such-editor"))
    assert done.returncode == 2 and "--edit: cannot start $EDITOR" in done.stderr, done.stdout + done.stderr
    # Leaving nothing above the scissors line is the merge without text, naming --content and --edit.
    cut_only = "p = Path(args[-1])\ntext = p.read_text()\np.write_text(text[text.index('# ---'):])"
    done = _merge_editing(home, listed["id"], _editor(tmp_path, "empty.py", cut_only))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--content: a merge needs the merged text (allowed: --content TEXT, or --edit" in done.stderr
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "database side"
    # An editor given with an argument, which sees both sides and writes the merge above the cut
    # (its argument lands in the text; non-ASCII, a CRLF and a # line kept as written).
    merging = _editor(tmp_path, "merge.py", "p = Path(args[-1])\nseen = p.read_text(encoding='utf-8')\n"
                      "assert seen.startswith('database side\\n') and '\\nfile side\\n' in seen, seen\n"
                      "below = seen[seen.index('# ---'):]\n"
                      "p.write_bytes(f'{args[0]}: both \u2014 \u00e9\\r\\n# a note\\nsecond line\\n\\n{below}'.encode())")
    done = _merge_editing(home, listed["id"], f"{merging} --wait")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == "--wait: both \u2014 \u00e9\r\n# a note\nsecond line"
    assert json.loads(_run(home, "--json", "conflicts")) == []


def test_cli_merge_edit_keeps_the_hash_lines_of_either_side(tmp_path: Path) -> None:
    """Every line starting with # was dropped from the edited merge, the template's and the memory's
    alike: a database side with a markdown heading ("# Plan") lost it. The draft is cut at git's
    scissors line instead; everything above it is kept byte for byte, a side's own scissors line too."""
    home = tmp_path / "home"
    scissors = "# ------------------------ >8 ------------------------"
    database_side = f"# Plan\n## Steps\n{scissors}\n- ship it"
    _run(home, "remember", "original", "--key", "k", "--tags", "notes")
    notes = home / "memory/agents/default/notes.md"
    notes.write_text(notes.read_text().replace("- original (", "- # Heading of the file side ("), encoding="utf-8")
    _run(home, "remember", database_side, "--key", "k", "--tags", "notes")
    [listed] = json.loads(_run(home, "--json", "conflicts"))
    assert listed["file_version"] == ["# Heading of the file side"]
    # Saved as opened, with the CRLF line endings some editors write: the database side, # lines and
    # its own scissors line kept (the draft's is longer), the file's version below the cut dropped.
    as_opened = _editor(tmp_path, "crlf.py", "p = Path(args[-1])\ntext = p.read_bytes()\n"
                        "assert b'\\n\\n# ' + b'-' * 24 + b' >8 ' + b'-' * 24 + b' >8\\n# Do not' in text, text\n"
                        "assert b'\\n# Heading of the file side\\n' in text, text\n"
                        "p.write_bytes(text.replace(b'\\n', b'\\r\\n'))")
    done = _merge_editing(home, listed["id"], as_opened)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(_run(home, "--json", "get", "k"))["content"] == database_side.replace("\n", "\r\n")
    # The file's version copied up above the cut comes in as it was, its # line with it.
    _run(home, "remember", "original", "--key", "j", "--tags", "plans")
    plans = home / "memory/agents/default/plans.md"
    plans.write_text(plans.read_text().replace("- original (", "- # From the file ("), encoding="utf-8")
    _run(home, "remember", "# Plan", "--key", "j", "--tags", "plans")
    [listed] = json.loads(_run(home, "--json", "conflicts"))
    copy_up = _editor(tmp_path, "copy.py", "p = Path(args[-1])\nlines = p.read_text().split('\\n')\n"
                      "p.write_text('\\n'.join([lines[0], lines[lines.index('# From the file')], '', *lines[1:]]))")
    done = _merge_editing(home, listed["id"], copy_up)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(_run(home, "--json", "get", "j"))["content"] == "# Plan\n# From the file"
    assert json.loads(_run(home, "--json", "conflicts")) == []
