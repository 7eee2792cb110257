"""The CLI as a script or another program drives it: output to a pipe, ``--json``, exit codes;
through the real entry point in a subprocess, as a shell runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from engram.engine import Engram

LONG = ("The deploy target is a Raspberry Pi 4 running Debian bookworm, reached over the office VPN "
        "as deploy@pi.internal, and rebooted every Sunday night")
KEY = "deploy-target-raspberry-pi-4-running-debian"


def run(home: Path, *args: str, stdin: bytes = b"", **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", **env)
    done = subprocess.run([sys.executable, "-m", "engram", *args], input=stdin, capture_output=True, env=full,
                          timeout=120)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def test_tables_to_a_pipe_print_each_memory_whole(tmp_path: Path) -> None:
    # To a pipe, rich laid tables out at 80 columns: a key and a content folded mid-word over
    # several lines ("deploy-tar" / "get-..."), which grep or cut cannot read.
    assert run(tmp_path, "remember", LONG, "--key", KEY).returncode == 0
    for args in (("list",), ("recall", "deploy target"), ("get", KEY), ("forget", KEY, "--dry-run"), ("audit",)):
        done = run(tmp_path, *args)
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
        assert KEY in done.stdout, (args, done.stdout)
        if args[0] != "audit":  # the audit trail shows the first 200 characters of a content
            assert any(LONG in line for line in done.stdout.splitlines()), (args, done.stdout)
    # A width asked for is kept: the table fits it.
    narrow = run(tmp_path, "list", COLUMNS="60")
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60


def test_migrate_without_the_postgres_extra_names_it_and_exits_4(tmp_path: Path) -> None:
    # Without psycopg, `engram migrate` ended "internal error: ModuleNotFoundError" with exit 1:
    # a missing extra is configuration (4), named with what to install, as the postgres backend says.
    blocked = tmp_path / "blocked"
    (blocked / "psycopg").mkdir(parents=True)
    (blocked / "psycopg" / "__init__.py").write_text("raise ImportError('blocked for this test', name='psycopg')\n")
    assert run(tmp_path, "remember", "kept", "--key", "kept").returncode == 0
    for args in (("migrate", "--to", "postgresql://engram@127.0.0.1:9/engram"),
                 ("--json", "migrate", "--to", "postgresql://engram@127.0.0.1:9/engram")):
        done = run(tmp_path, *args, PYTHONPATH=str(blocked))
        assert done.returncode == 4, done.stderr
        assert "psycopg" in done.stderr and "[postgres]" in done.stderr and "internal error" not in done.stderr
        assert done.stdout == ""


def test_chat_with_json_prints_one_json_line_per_answer(tmp_path: Path) -> None:
    # `engram --json chat` printed its replies as plain text: a program asking for JSON could not
    # parse standard output. Now each answer is a JSON line; the banner stays on standard error.
    done = run(tmp_path, "--json", "chat", "-m", "My name is Ada", "-m", "/help", "-m", "What is my name?",
               ENGRAM_LLM__PROVIDER="none")
    assert done.returncode == 0, done.stderr
    told, helped, answered = (json.loads(line) for line in done.stdout.splitlines())
    assert told["message"] == "My name is Ada" and told["stored"] and isinstance(told["reply"], str)
    assert helped["command"] == "/help"
    assert "Ada" in answered["reply"]
    piped = run(tmp_path, "--json", "chat", stdin=b"What is my name?\n", ENGRAM_LLM__PROVIDER="none")
    assert "Ada" in json.loads(piped.stdout)["reply"]


def test_every_option_of_every_command_says_what_it_does(tmp_path: Path) -> None:
    # neighbours, audit and summaries showed `--limit -n <int> [default: N]` and nothing else.
    top = run(tmp_path, "--help", COLUMNS="200").stdout
    commands = [line.split()[1] for line in top.splitlines()
                if line.startswith("│ ") and len(line.split()) > 2 and line.split()[1].isalpha()
                and line.split()[1] not in ("Show",)]
    groups = {"history": ["list", "show", "append", "summary", "purge", "compact", "transcript"],
              "conflicts": ["resolve"], "mcp": ["install"], "token": ["create", "list", "revoke"]}
    paths = [[c] for c in commands] + [[g, sub] for g, subs in groups.items() for sub in subs]
    assert ["neighbours"] in paths and ["audit"] in paths and ["summaries"] in paths, paths
    bare = []
    for path in paths:
        shown = run(tmp_path, *path, "--help", COLUMNS="200").stdout
        for line in shown.splitlines():  # "│ --limit  -n  <int>  How many ... [default: 20]  │"
            cells = line.strip("│ ").split()
            metavar = next((i for i, cell in enumerate(cells) if cell.startswith("<")), None)
            if not cells or not cells[0].startswith("--") or metavar is None:  # a description's line
                continue
            if metavar + 1 == len(cells) or cells[metavar + 1].startswith("[default"):
                bare.append((" ".join(path), line.strip()))
    assert not bare, bare


def test_errors_with_json_leave_stdout_empty_and_say_what_on_stderr_with_the_documented_code(tmp_path: Path) -> None:
    # docs/cli.md: an error is never JSON; stdout empty, one "error:" line, exit 2 bad input, 3 not found.
    assert run(tmp_path, "remember", "kept", "--key", "kept").returncode == 0
    for args, code in ((("get", "nosuch"), 3), (("forget", "nosuch"), 3), (("update", "nosuch", "-i", "0.1"), 3),
                       (("link", "nosuch", "kept"), 3), (("neighbours", "--key", "nosuch"), 3),
                       (("remember", "x", "--importance", "5"), 2), (("list", "--limit", "0"), 2)):
        done = run(tmp_path, "--json", *args)
        assert done.returncode == code and done.stdout == "", (args, done.returncode, done.stdout)
        assert done.stderr.startswith("error: ") and len(done.stderr.splitlines()) == 1, (args, done.stderr)


def test_token_revoke_with_json_prints_json(tmp_path: Path) -> None:
    # `engram --json token revoke ID` printed "revoked token ..." as text, the one command that did.
    made = json.loads(run(tmp_path, "--json", "token", "create", "--agent", "alice").stdout)
    done = run(tmp_path, "--json", "token", "revoke", made["id"])
    assert done.returncode == 0, done.stderr
    revoked = json.loads(done.stdout)
    assert revoked["id"] == made["id"] and revoked["agent"] == "alice" and revoked["revoked_at"] and revoked["changed"]


def test_revoking_a_revoked_token_says_so_and_changes_nothing(tmp_path: Path) -> None:
    # It said `error: token not found` (exit 3) of a token `engram token list --all` shows revoked.
    made = json.loads(run(tmp_path, "--json", "token", "create", "--agent", "alice").stdout)
    first = json.loads(run(tmp_path, "--json", "token", "revoke", made["id"]).stdout)
    again = run(tmp_path, "--json", "token", "revoke", made["id"])
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert json.loads(again.stdout) == {**first, "changed": False}
    said = run(tmp_path, "token", "revoke", made["id"])
    assert said.returncode == 0 and said.stdout.startswith(f"token {made['id']} of agent alice was already revoked ("), said
    missing = run(tmp_path, "token", "revoke", "nosuchid")
    assert missing.returncode == 3 and missing.stderr == 'error: token not found: "nosuchid"\n', missing.stderr


def test_a_logged_warning_reaches_stderr_as_warning_lines(tmp_path: Path) -> None:
    # docs/cli.md: on success standard error holds only warnings, as `warning: ...`. Warnings engram
    # logs (a mistyped key in the config file) came out as the bare message through Python's
    # fallback handler, so a script looking for `warning:` missed them.
    tmp_path.joinpath("config.toml").write_text('agent = "assistant"\n[recall]\nfuzion = "rrf"\n')
    done = run(tmp_path, "count")
    assert done.returncode == 0 and done.stdout == "0\n", done.stderr
    assert done.stderr.splitlines() == [
        f"warning: {tmp_path / 'config.toml'}: recall.fuzion: not a setting engram knows, ignored (did you mean 'fusion'?)"]


def test_a_change_that_meets_a_hand_edit_says_where_the_conflict_is_kept(tmp_path: Path) -> None:
    # docs/files.md: a change made through engram after the same entry was edited in its file
    # becomes a conflict, never a silent overwrite. `engram update` made the conflict and said
    # nothing: the edit was found only by someone running `engram conflicts`.
    assert run(tmp_path, "remember", "Alpha fact", "--key", "alpha", "--tags", "notes").returncode == 0
    notes = tmp_path / "memory" / "agents" / "default" / "notes.md"
    notes.write_text(notes.read_text().replace("Alpha fact", "Alpha fact edited in the file"))
    done = run(tmp_path, "update", "alpha", "--content", "Alpha fact edited in the database")
    assert done.returncode == 0, done.stderr
    kept = json.loads(run(tmp_path, "--json", "conflicts").stdout)
    assert [c["file_version"] for c in kept] == [["Alpha fact edited in the file"]]
    assert done.stderr.startswith("warning: memory folder: ") and kept[0]["path"] in done.stderr, done.stderr


def test_tags_given_twice_keeps_both(tmp_path: Path) -> None:
    # `--tags a --tags b` kept only b: click keeps an option's last value, and the first was dropped
    # without a word. Both are kept now, on remember and on update (which replaces the stored tags).
    assert run(tmp_path, "remember", "The office is on the third floor", "--key", "office",
               "--tags", "work,place", "--tags", "building").returncode == 0
    got = json.loads(run(tmp_path, "--json", "get", "office").stdout)
    assert sorted(got["tags"]) == ["building", "place", "work"]
    assert run(tmp_path, "update", "office", "--tags", "floor", "--tags", "work").returncode == 0
    got = json.loads(run(tmp_path, "--json", "get", "office").stdout)
    assert sorted(got["tags"]) == ["floor", "work"]
    assert run(tmp_path, "update", "office", "--tags", "").returncode == 0  # empty still clears
    assert json.loads(run(tmp_path, "--json", "get", "office").stdout)["tags"] == []


def test_recall_narrows_to_one_scope_as_list_does(tmp_path: Path) -> None:
    assert run(tmp_path, "remember", "the harbour ferry leaves at nine", "--key", "ferry-global",
               "--scope", "global").returncode == 0
    assert run(tmp_path, "remember", "the harbour ferry is always late", "--key", "ferry-agent").returncode == 0
    done = run(tmp_path, "--json", "recall", "harbour ferry", "--scope", "global")
    assert done.returncode == 0, done.stderr
    assert [h["memory"]["key"] for h in json.loads(done.stdout)["hits"]] == ["ferry-global"]


def test_scope_session_without_a_session_says_how_to_name_one_at_this_door(tmp_path: Path) -> None:
    # The hint read "open it with session=... first": Python's words, at the CLI and over HTTP.
    for args in (("recall", "ferry", "--scope", "session"), ("list", "--scope", "session")):
        done = run(tmp_path, *args)
        assert done.returncode == 2 and "scope" in done.stderr and "--session" in done.stderr, done.stderr
    assert run(tmp_path, "--session", "trip", "list", "--scope", "session").returncode == 0


def test_migrate_with_no_database_to_copy_into_says_what_it_needs(tmp_path: Path) -> None:
    # Neither --to nor database_url: the command names both ways to give the target, exit 2 (bad input).
    assert run(tmp_path, "remember", "kept", "--key", "kept").returncode == 0
    for args in (("migrate",), ("--json", "migrate")):
        done = run(tmp_path, *args)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert done.stdout == ""
        assert "--to: no PostgreSQL database to copy into" in done.stderr and "ENGRAM_DATABASE_URL" in done.stderr
    empty = run(tmp_path, "migrate", "--to", "", ENGRAM_DATABASE_URL="postgresql://engram@127.0.0.1:9/engram")
    assert empty.returncode == 2 and "--to: empty" in empty.stderr and empty.stdout == ""  # not the setting's unsaid


def test_every_command_with_json_prints_one_json_document_and_nothing_on_stderr(tmp_path: Path) -> None:
    # docs/cli.md: with --json, standard output is one JSON document. `export FILE` (a snapshot, mem0
    # JSON, basic-memory notes) printed nothing there, its "exported to" line on stderr alone.
    # In-process (Typer's runner, stdout and stderr apart): some forty commands, a second each as subprocesses.
    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app

    home, out = tmp_path / "home", tmp_path / "out"

    def invoke(*args: str):  # noqa: ANN202 - click's Result
        return CliRunner().invoke(app, ["--home", str(home), *args], env={"ENGRAM_EMBEDDINGS__PROVIDER": "none"},
                                  catch_exceptions=False)

    for key in ("tea", "cake"):
        assert invoke("remember", f"a fact about {key}", "--key", key).exit_code == 0
    assert invoke("history", "append", "cli:1", "hello").exit_code == 0
    commands = [
        ("remember", "x", "--key", "x"), ("update", "tea", "--importance", "0.5"), ("recall", "tea"), ("get", "tea"),
        ("versions", "tea"), ("list",), ("link", "tea", "cake"), ("neighbours", "tea"), ("unlink", "tea", "cake"),
        ("supersede", "x", "tea"), ("count",), ("stats",), ("stats", "--all-agents"), ("export",),
        ("export", str(out / "s.json")), ("export", "--format", "mem0", str(out / "m.json")),
        ("export", "--format", "basic-memory", str(out / "bm")), ("export", "--format", "markdown", str(out / "md")),
        ("import", str(out / "s.json")), ("forget", "cake", "--dry-run"), ("forget", "cake"), ("audit",), ("backup",),
        ("backup", "--list"), ("vacuum",), ("maintain",), ("summaries",), ("sync",), ("conflicts",),
        ("token", "create", "--agent", "a"), ("token", "list"),
        ("history", "append", "cli:1", "--role", "assistant", "hi"), ("history", "list"), ("history", "show", "cli:1"),
        ("history", "summary", "cli:1", "--set", "a greeting"), ("history", "summary", "cli:1"),
        ("history", "compact", "cli:1"), ("history", "compact", "cli:1", "--force"), ("history", "transcript", "cli:1"),
        ("history", "purge", "cli:1", "--yes"), ("history", "show", "cli:1"),
    ]
    exported = {}
    for args in commands:
        done = invoke("--json", *args)
        assert done.exit_code == 0, (args, done.stderr)
        assert done.stderr == "", (args, done.stderr)
        shown = json.loads(done.stdout)  # the whole of stdout: one document
        if args[0] == "export" and len(args) > 1:
            exported[args[-1]] = shown
    assert exported[str(out / "s.json")] == {"exported": 3, "format": "snapshot", "path": str(out / "s.json")}
    assert exported[str(out / "m.json")]["exported"] == len(json.loads((out / "m.json").read_text())["results"])
    assert exported[str(out / "bm")]["format"] == "basic-memory" and exported[str(out / "bm")]["exported"] >= 2


# A child stopped with Ctrl-C gets SIGINT as a terminal's child has it. A test run started in the
# background (`./.ci/run &` from a script) ignores SIGINT, children inherit that, and Python then never
# raises KeyboardInterrupt: the command ran to its end (exit 0) and these tests failed (as
# test_mcp_stdin.py already knew).
AS_AT_A_TERMINAL = {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)}


def test_a_long_forget_says_what_it_removed_before_its_table_and_a_ctrl_c_meanwhile_keeps_it_so(tmp_path: Path) -> None:
    """A bulk forget of thousands printed nothing until rich had built the whole table (18,000 rows:
    40 s), the memories long gone: a Ctrl-C meanwhile exited 130 with no word of what was removed.
    The count comes first now, on standard error; interrupted, the store holds what it said."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.remember_many([{"content": f"note {i} about the deploy", "tags": ["tmp" if i % 4 else "keep"]}
                              for i in range(4000)])
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    proc = subprocess.Popen([sys.executable, "-m", "engram", "forget", "--tag", "tmp"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=full, **AS_AT_A_TERMINAL)
    assert proc.stderr is not None
    said = proc.stderr.readline().decode()  # written before the table is drawn
    assert said == "forgot 3000 memories; listing them\n", said
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)  # mid-table (3,000 rows take seconds to draw)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130), stderr
    if proc.returncode == 130:  # the listing stopped, and says so: no longer a silent exit
        assert stderr.decode() == "interrupted while listing the 3000 forgotten memories\n", stderr
    assert run(tmp_path, "count").stdout.strip() == "1000"  # the 3,000 are gone, the rest whole
    # Few rows: no line first (the table says it at once); with --json, the JSON alone.
    few = run(tmp_path, "forget", "--tag", "keep", "--dry-run", "--json")
    assert few.returncode == 0 and few.stderr == "" and len(json.loads(few.stdout)["removed"]) == 1000
    small = run(tmp_path, "forget", "--query", "note 8 about")
    assert small.returncode == 0 and small.stderr == "" and "forgot" in small.stdout, small.stderr


def test_a_long_command_stopped_by_ctrl_c_says_where_it_stopped(tmp_path: Path) -> None:
    """A Ctrl-C took the progress bar away with it and exited 130 with no word (a reindex stopped at
    768 of 20,000, its vectors so far kept): the last count the engine reported is said now, on
    standard error, on a terminal or not, the store left whole."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.remember_many([{"content": f"note {i} about the deploy"} for i in range(12000)])
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "engram", "--json", "export", "--format", "json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full, **AS_AT_A_TERMINAL)
    deadline = time.monotonic() + 60
    # Past the first report (one each 200 files) before the Ctrl-C, and far from the end.
    while proc.poll() is None and time.monotonic() < deadline and len(list(out.rglob("*.json"))) < 250:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)  # mid-export: a file per memory
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, stderr)
    said = stderr.decode().strip().splitlines()[-1]
    assert said.startswith("interrupted while exporting as json (") and said.endswith(" of 12000)"), stderr
    assert stdout == b""  # --json: no document for work not done, no bar
    assert run(tmp_path, "count").stdout.strip() == "12000"


def test_a_forget_or_compact_with_nothing_to_do_in_a_new_home_makes_no_store(tmp_path: Path) -> None:
    """`engram forget --tag X` and `engram history compact` in a home not made yet made the home,
    memory.db and its memory folder, to find nothing; as `recall` there, they say so and make none."""
    home = tmp_path / "new"
    for args, said in ((("forget", "--tag", "X"), "nothing to forget"),
                       (("forget", "--query", "deploy", "--erase"), "nothing to forget"),
                       (("history", "compact", "cli:1"), "nothing to compact: 0 messages"),
                       (("history", "compact", "cli:1", "--force"), "nothing to compact: only 0 messages")):
        done = run(home, *args)
        assert done.returncode == 0 and done.stdout == "", (args, done.stderr)
        assert done.stderr.startswith(said), (args, done.stderr)
        assert not home.exists(), (args, sorted(p.name for p in home.iterdir()))
    assert run(home, "forget", "abc").returncode == 3 and not home.exists()  # an unknown one: not found, as before
    # The first write makes it, and a forget then finds what it holds.
    assert run(home, "remember", "the deploy runs at noon", "--tags", "X").returncode == 0
    assert "forgot" in run(home, "forget", "--tag", "X").stdout and run(home, "count").stdout.strip() == "0"


def test_a_bulk_forget_stopped_by_ctrl_c_says_whether_its_memories_were_gone(tmp_path: Path) -> None:
    """A Ctrl-C during a bulk forget (before its count line: the backup, the removal, the audit
    trail and memory folder told) exited 130 with no word, 9,000 memories gone or not. It now says
    the step, and the store holds what that step means: before the removal's one transaction
    commits none is gone, after it all are, and the next sync takes them out of the memory folder."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.remember_many([{"content": f"note {i} about the deploy", "tags": ["tmp" if i % 4 else "keep"]}
                              for i in range(12000)])
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    kept_all = ("interrupted while taking the backup before a bulk forget",)
    # One transaction: a Ctrl-C during its commit is raised once the commit is done, so all or none.
    all_or_none = "interrupted while forgetting them in one transaction (all or none: engram count tells which)"
    gone_all = ("interrupted while recording the forgotten memories in the audit trail and memory folder (9000 of 9000)",
                "interrupted while listing the 9000 forgotten memories")
    stopped = []
    # Each try waits for the backup the bulk forget takes first (the work has started), then later
    # each time: a stop that kept every memory is tried again, until one forgot them.
    for wait in (0.0, 0.3, 0.8, 1.5, 2.5, 4.0):
        backups = set((tmp_path / "backups").glob("*bulk-forget*"))
        proc = subprocess.Popen([sys.executable, "-m", "engram", "forget", "--tag", "tmp"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=full, **AS_AT_A_TERMINAL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and \
                not set((tmp_path / "backups").glob("*bulk-forget*")) - backups:
            time.sleep(0.01)
        time.sleep(wait)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        said = stderr.decode().strip().splitlines()[-1:] or [""]
        count = run(tmp_path, "count").stdout.strip()
        if proc.returncode == 0:  # done before the signal: the whole forget, as it says
            assert "forgot" in said[0] + stdout.decode() and count == "3000", (stdout, stderr)
            break
        assert proc.returncode == 130 and said[0] in (*kept_all, all_or_none, *gone_all), (proc.returncode, stderr)
        stopped.append(said[0])
        if said[0] in kept_all or (said[0] == all_or_none and count == "12000"):
            assert count == "12000", (said, count)  # nothing gone, the store whole
            continue
        assert count == "3000", (said, count)  # every one gone, as said
        synced = run(tmp_path, "sync")
        assert synced.returncode == 0 and run(tmp_path, "count").stdout.strip() == "3000", synced.stdout
        assert "- note 9 about the deploy (" not in "".join(p.read_text() for p in (tmp_path / "memory").rglob("*.md"))
        break
    assert stopped, "every try finished before its Ctrl-C: nothing was interrupted"


def test_a_transcript_indexing_stopped_by_ctrl_c_says_how_far_it_got(tmp_path: Path) -> None:
    """`engram history transcript --index` of a long conversation stopped by Ctrl-C exited 130
    with no word. It says how many turns it had indexed; those are stored (each turn its own
    write), and the transcript file, written whole at the end, is not there half-written."""
    turns = 3000  # about 15 ms a turn: far longer than the wait for the first turns stored
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, history={"max_history_len": 10000}) as engram:
        engram.history.append_many("cli:long", [
            {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"question {i // 2} about the deploy pipeline, its runners and their caches"}
            for i in range(2 * turns)])
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_") and k != "COLUMNS"}
    full.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none", ENGRAM_HISTORY__MAX_HISTORY_LEN="10000")
    proc = subprocess.Popen([sys.executable, "-m", "engram", "history", "transcript", "cli:long", "--index"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full, **AS_AT_A_TERMINAL)
    deadline = time.monotonic() + 60
    db = sqlite3.connect(f"file:{tmp_path / 'memory.db'}?mode=ro", uri=True)
    try:  # past the first turns stored, far from the last
        while proc.poll() is None and time.monotonic() < deadline and \
                db.execute("SELECT COUNT(*) FROM memories").fetchone()[0] < 30:
            time.sleep(0.02)
    finally:
        db.close()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and stdout == b"", (proc.returncode, stdout, stderr)
    said = stderr.decode().strip().splitlines()[-1]
    match = re.fullmatch(rf"interrupted while indexing turns \((\d+) of {turns}\)", said)
    assert match, stderr
    stored = int(run(tmp_path, "count").stdout.strip())
    assert 30 <= stored and int(match[1]) <= stored <= int(match[1]) + 1, (said, stored)  # (a turn stored as the signal came)
    assert not list((tmp_path / "transcripts").rglob("*.md"))  # no file, not a part of one
    # Written now without indexing: the turns stored so far are the ones marked indexed.
    assert run(tmp_path, "history", "transcript", "cli:long").returncode == 0
    (written,) = (tmp_path / "transcripts").rglob("*.md")
    assert written.read_text().count("[Indexed: ") == stored
