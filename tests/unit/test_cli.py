"""The ``engram`` command, run as a user runs it: a real process on a real SQLite file."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest


def engram(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, input=stdin, timeout=120
    )


def test_remember_then_recall_finds_it(isolated_home: Path) -> None:
    stored = engram(isolated_home, "remember", "User prefers Python for scripting", "--tags", "preferences")
    assert stored.returncode == 0, stored.stderr
    assert "stored" in stored.stdout
    found = engram(isolated_home, "--json", "recall", "what language does the user like for scripts")
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    assert result["hits"][0]["memory"]["content"] == "User prefers Python for scripting"
    assert result["hits"][0]["memory"]["tags"] == ["preferences"]
    assert set(result["hits"][0]["parts"]) == {"text", "vector", "fused", "recency", "importance", "link"}
    human = engram(isolated_home, "recall", "scripting")
    assert "User prefers Python for scripting" in human.stdout


def test_recall_shows_when_a_fact_with_an_end_held(isolated_home: Path) -> None:
    # An ended fact stays in ordinary recall (only superseding takes one out): the table says when it held.
    engram(isolated_home, "remember", "Alice works at Acme Corp", "--valid-from", "2024-02-01",
           "--valid-until", "2025-05-01")
    engram(isolated_home, "remember", "Alice works at Globex", "--valid-from", "2025-05-01")
    engram(isolated_home, "remember", "Alice works remotely on Fridays", "--valid-until", "2027-01-01")
    shown = engram(isolated_home, "recall", "where does alice work")
    assert shown.returncode == 0, shown.stderr
    assert "held 2024-02-01 to 2025-05-01" in shown.stdout and "held until 2027-01-01" in shown.stdout
    assert shown.stdout.count("held") == 2  # an open fact says nothing more


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("remember", ""), 2, "content"),
        (("remember", "x", "--category", "bogus"), 2, "category"),
        (("remember", "x", "--importance", "3"), 2, "importance"),
        (("remember", "x", "--metadata", "{oops"), 2, "metadata"),
        (("get", "nothing-here"), 3, "not found"),
        (("forget", "nothing-here"), 3, "not found"),
        (("link", "a", "b"), 3, "not found"),
        # The option as typed, and which of the repeated --link it was (as HTTP and MCP name links[0]).
        (("remember", "x", "--link", "no-such"), 3, 'error: memory named by --link[0] not found: "no-such"\n'),
        (("remember", "x", "--link", " "), 2, "error: --link[0]: must not be empty (allowed: "),
        (("forget", "--older-than", "soon"), 2, "--older-than"),
        (("list", "--since", "yesterday-ish"), 2, "since:"),
        # An option's unknown choice, named as typed (it was exit 4 "backend: ... (from an argument)").
        (("--backend", "nope", "count"), 2,
         'error: --backend: unknown memory backend "nope" (allowed: disabled, inmemory, jsonfile, postgres, sqlite)\n'),
        (("--backend", "nope", "config", "show"), 2, 'error: --backend: unknown memory backend "nope" (allowed: '),
        (("count", "--bogus"), 2, "No such option"),
    ],
)
def test_errors_are_clear_with_exit_codes(isolated_home: Path, args: tuple[str, ...], code: int, words: str) -> None:
    result = engram(isolated_home, *args)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert words in result.stderr
    assert "Traceback" not in result.stderr


def test_full_command_set(isolated_home: Path, tmp_path: Path) -> None:
    assert engram(isolated_home, "remember", "Prefers Python", "--key", "py").returncode == 0
    assert engram(isolated_home, "remember", "Project uses Python 3.12", "--key", "proj", "--link", "py").returncode == 0
    neighbours = json.loads(engram(isolated_home, "--json", "neighbours", "py").stdout)
    assert [m["key"] for m in neighbours] == ["proj"]
    assert engram(isolated_home, "unlink", "py", "proj").returncode == 0
    assert json.loads(engram(isolated_home, "--json", "neighbours", "py").stdout) == []
    assert engram(isolated_home, "link", "py", "proj").returncode == 0
    got = json.loads(engram(isolated_home, "--json", "get", "proj").stdout)
    assert got["content"] == "Project uses Python 3.12" and got["links"]
    listed = json.loads(engram(isolated_home, "--json", "list", "--limit", "1").stdout)
    assert len(listed) == 1
    assert json.loads(engram(isolated_home, "--json", "count").stdout) == {"count": 2}
    snapshot = tmp_path / "snap.json"
    assert engram(isolated_home, "export", str(snapshot)).returncode == 0
    other_home = tmp_path / "other"
    imported = engram(other_home, "--json", "import", str(snapshot))
    assert json.loads(imported.stdout) == {"imported": 2, "skipped": 0, "warnings": []}
    assert json.loads(engram(other_home, "--json", "neighbours", "py").stdout)[0]["key"] == "proj"
    removed = json.loads(engram(isolated_home, "--json", "forget", "py").stdout)
    assert [m["key"] for m in removed["removed"]] == ["py"]
    stats = json.loads(engram(isolated_home, "--json", "stats").stdout)
    assert stats["memories"] == 1 and stats["backend"] == "sqlite"


def test_stats_show_what_the_agent_sees_and_all_agents_only_when_asked(isolated_home: Path) -> None:
    engram(isolated_home, "--agent", "alice", "remember", "Alice's tea note", "--key", "tea")
    engram(isolated_home, "--agent", "alice", "remember", "Everyone's rule", "--key", "rule", "--scope", "global")
    for n in range(3):
        engram(isolated_home, "--agent", "bob", "remember", f"Bob's private note {n}", "--key", f"bob-{n}")
    mine = json.loads(engram(isolated_home, "--agent", "alice", "--json", "stats").stdout)
    assert (mine["view"], mine["agent"], mine["memories"]) == ("agent", "alice", 2)
    assert mine["by_scope"] == {"agent:alice": 1, "global": 1} and "bob" not in json.dumps(mine)
    human = engram(isolated_home, "--agent", "alice", "stats").stdout
    assert "2 visible to agent alice" in human and "agent:bob" not in human and "all agents" not in human
    whole = json.loads(engram(isolated_home, "--agent", "alice", "--json", "stats", "--all-agents").stdout)
    assert (whole["view"], whole["memories"]) == ("store", 5) and whole["by_scope"]["agent:bob"] == 3
    assert "5 in the whole store (all agents)" in engram(isolated_home, "stats", "--all-agents").stdout


def test_stats_set_a_session_the_view_does_not_read_apart_from_its_counts(isolated_home: Path) -> None:
    # by_scope lists every session of the agent (where its memories are), but the figures above it
    # count the view's own: printed as one unlabelled list, a session's memory looked counted in them.
    engram(isolated_home, "--agent", "ops", "--session", "run-42", "remember", "Deploys on Tuesday", "--key", "deploy",
           "--scope", "session")
    human = engram(isolated_home, "--agent", "ops", "stats").stdout
    assert "0 visible to agent ops" in human
    assert re.search(r"session:ops/run-42 +1  \(not counted: another session, -s run-42\)", human), human
    assert "  by category:" in human and "  by scope:" in human
    inside = engram(isolated_home, "--agent", "ops", "--session", "run-42", "stats").stdout
    assert "1 visible to agent ops/run-42" in inside and "not counted" not in inside


def test_audit_window_takes_dates_and_phrases(isolated_home: Path) -> None:
    import datetime as dt

    engram(isolated_home, "remember", "noted today", "--key", "today")
    engram(isolated_home, "--agent", "bob", "remember", "bob's note", "--key", "bobs")

    def keys(*window: str) -> list[str]:
        shown = engram(isolated_home, "--json", "audit", *window)
        assert shown.returncode == 0, shown.stderr
        return [e["memory_key"] for e in json.loads(shown.stdout)]

    today = dt.date.today().isoformat()
    assert keys("--since", "today") == keys("--since", today) == keys("--until", "today") == ["today"]
    assert keys("--since", "last week", "--until", today) == ["today"]
    assert keys("--until", "yesterday") == keys("--since", "4000000000") == []
    for window, field in ((("--since", "whenever"), "since"), (("--until", "13/02/2026"), "until"),
                          (("--since", "today", "--until", "yesterday"), "until")):
        bad = engram(isolated_home, "audit", *window)
        assert bad.returncode == 2 and f"{field}:" in bad.stderr, bad.stderr


def test_malformed_import_changes_nothing(isolated_home: Path, tmp_path: Path) -> None:
    engram(isolated_home, "remember", "keep me")
    bad = tmp_path / "bad.json"
    bad.write_text('{"memories": [{"content": "ok"}, {"content": "", "key": "x"}]}')
    result = engram(isolated_home, "import", str(bad))
    assert result.returncode == 2 and "memories[1].content" in result.stderr
    assert json.loads(engram(isolated_home, "--json", "count").stdout) == {"count": 1}


def test_every_command_has_help(isolated_home: Path) -> None:
    top = engram(isolated_home, "--help")
    assert top.returncode == 0
    for command in ("remember", "recall", "get", "versions", "list", "forget", "link", "unlink", "neighbours", "count",
                    "export", "import", "stats"):
        result = engram(isolated_home, command, "--help")
        assert result.returncode == 0 and "Usage" in result.stdout, command
        assert command in top.stdout


def test_backend_help_names_every_built_in_backend(isolated_home: Path) -> None:
    from engram import registry

    shown = engram(isolated_home, "--help").stdout
    line = next(line for line in shown.splitlines() if "--backend" in line)
    missing = [name for name in registry.names("backend") if name not in line]
    assert not missing, f"--backend's help leaves out {missing}: {line}"  # postgres was left out


def test_long_commands_leave_stderr_empty_when_it_is_not_a_terminal(isolated_home: Path, tmp_path: Path) -> None:
    # rich's progress printed an empty line on stop to a pipe or a log, with --json too.
    assert engram(isolated_home, "remember", "Prefers Python", "--key", "py").returncode == 0
    snapshot = tmp_path / "snapshot.json"
    assert engram(isolated_home, "export", str(snapshot)).returncode == 0
    for args in (("import", str(snapshot)), ("--json", "import", str(snapshot)), ("maintain",), ("sync",)):
        result = engram(isolated_home, *args)
        assert result.returncode == 0 and result.stderr == "", (args, result.stderr)


def test_disabled_backend_answers_without_error(isolated_home: Path) -> None:
    result = engram(isolated_home, "--backend", "disabled", "remember", "anything")
    assert result.returncode == 0
    assert json.loads(engram(isolated_home, "--backend", "disabled", "--json", "count").stdout) == {"count": 0}


def test_export_to_a_missing_folder_creates_it_and_an_unwritable_path_is_a_clear_error(
    isolated_home: Path, tmp_path: Path
) -> None:
    assert engram(isolated_home, "remember", "Plan B is the fallback").returncode == 0
    target = tmp_path / "not" / "yet" / "there.json"
    written = engram(isolated_home, "export", str(target))
    assert written.returncode == 0, written.stderr
    assert json.loads(target.read_text())["memories"][0]["content"] == "Plan B is the fallback"
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    refused = engram(isolated_home, "export", str(blocker / "snap.json"))
    assert refused.returncode == 2
    assert "internal error" not in refused.stderr and "path" in refused.stderr


def test_links_to_another_agents_memory_are_not_shown(isolated_home: Path, tmp_path: Path) -> None:
    # A global memory linked to alice's: bob sees the global memory, never the id of alice's.
    assert engram(isolated_home, "remember", "the boiler is serviced in May", "--key", "boiler", "--scope",
                  "global").returncode == 0
    assert engram(isolated_home, "--agent", "alice", "remember", "alice has the boiler warranty", "--key",
                  "warranty", "--link", "boiler").returncode == 0
    secret = json.loads(engram(isolated_home, "--agent", "alice", "--json", "get", "warranty").stdout)["id"]
    assert json.loads(engram(isolated_home, "--agent", "alice", "--json", "get", "boiler").stdout)["links"] == [secret]
    bob = ("--agent", "bob", "--json")
    assert json.loads(engram(isolated_home, *bob, "get", "boiler").stdout)["links"] == []
    assert json.loads(engram(isolated_home, *bob, "list").stdout)[0]["links"] == []
    found = json.loads(engram(isolated_home, *bob, "recall", "boiler serviced", "--depth", "1").stdout)["hits"]
    assert [h["memory"]["key"] for h in found] == ["boiler"] and found[0]["memory"]["links"] == []
    snapshot = tmp_path / "bob.json"
    assert engram(isolated_home, "--agent", "bob", "export", str(snapshot)).returncode == 0
    assert secret not in snapshot.read_text()


def test_get_shows_importance_as_a_person_reads_it(isolated_home: Path) -> None:
    assert engram(isolated_home, "remember", "Project uses Python 3.12", "--key", "py").returncode == 0
    for _ in range(2):  # each recall strengthens it by lifecycle.strengthen.importance_boost (0.05)
        assert engram(isolated_home, "recall", "python version").returncode == 0
    stored = json.loads(engram(isolated_home, "--json", "get", "py").stdout)["importance"]
    assert round(stored, 9) == 0.6  # kept as 0.6000000000000001
    row = next(line for line in engram(isolated_home, "get", "py").stdout.splitlines() if "importance" in line)
    assert row.split("│")[2].strip() == "0.6"


def _detail_rows(stdout: str) -> dict[str, str]:
    """``engram get``'s table as field -> value (a value folded over lines is not needed here)."""
    cells = (line.split("│") for line in stdout.splitlines() if line.startswith("│"))
    return {c[1].strip(): c[2].strip() for c in cells if c[1].strip()}


def test_get_shows_when_an_imported_memory_arrived_beside_its_source_times(isolated_home: Path) -> None:
    # An import keeps the source's times and arrives now: the detail shows both, each as `when` prints
    # a time (local, to the minute), so a person sees a 2024 memory that came in today.
    source = Path(__file__).resolve().parents[1] / "fixtures" / "import" / "mem0.json"
    before = time.time()
    assert engram(isolated_home, "import", str(source), "--into-agent").returncode == 0
    after = time.time()
    key = "deploys-billing-service-every-tuesday"  # created 2024-04-10T08:30:00Z in the file
    stored = json.loads(engram(isolated_home, "--json", "get", key).stdout)
    assert stored["created_at"] == 1712737800.0 and before <= stored["received_at"] <= after
    shown = engram(isolated_home, "get", key)
    assert shown.returncode == 0, shown.stderr
    rows = _detail_rows(shown.stdout)
    minute = "%Y-%m-%d %H:%M"
    assert rows["created_at"] == dt.datetime.fromtimestamp(1712737800.0).strftime(minute)
    assert rows["received_at"] == dt.datetime.fromtimestamp(stored["received_at"]).strftime(minute)
    # Stored here, a memory arrives when it is created: the two rows say the same time.
    assert engram(isolated_home, "remember", "The billing service moved to Fridays", "--key", "fresh").returncode == 0
    fresh = json.loads(engram(isolated_home, "--json", "get", "fresh").stdout)
    assert fresh["received_at"] == fresh["created_at"]
    rows = _detail_rows(engram(isolated_home, "get", "fresh").stdout)
    assert rows["received_at"] == rows["created_at"] == dt.datetime.fromtimestamp(fresh["created_at"]).strftime(minute)


def test_a_message_line_is_not_folded_at_the_terminal_width(isolated_home: Path) -> None:
    # Printed to a pipe, rich folded "stored: KEY (ID)" at 80 columns, so a script reading the
    # line got half of it. Tables still fit the width; a message line is printed whole.
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "COLUMNS": "40"}
    done = subprocess.run([sys.executable, "-m", "engram", "remember", "The deploy target is a Raspberry Pi 4 running "
                           "Debian bookworm", "--key", "deploy-target-raspberry-pi-4-running-debian"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    line, = done.stdout.splitlines()
    assert line.startswith("stored: deploy-target-raspberry-pi-4-running-debian (") and line.endswith(")")


def test_token_commands_take_the_global_agent_and_never_default_to_one(isolated_home: Path) -> None:
    # `engram -a alice token create` failed asking for --agent, the one command where the global
    # option did not choose the agent.
    made = engram(isolated_home, "--json", "-a", "alice", "token", "create", "--name", "laptop")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["agent"] == "alice"
    assert engram(isolated_home, "token", "create", "--agent", "bob").returncode == 0
    mine = engram(isolated_home, "--json", "-a", "alice", "token", "list")
    assert [t["agent"] for t in json.loads(mine.stdout)] == ["alice"]
    every = engram(isolated_home, "--json", "token", "list")
    assert sorted(t["agent"] for t in json.loads(every.stdout)) == ["alice", "bob"]
    unnamed = engram(isolated_home, "token", "create")
    assert unnamed.returncode != 0 and "agent" in unnamed.stderr and "-a NAME" in unnamed.stderr
    assert len(json.loads(engram(isolated_home, "--json", "token", "list").stdout)) == 2  # nothing made


def test_sync_shows_each_problem_once(isolated_home: Path) -> None:
    # The pass logged each problem and the command printed the report's: every one appeared twice.
    assert engram(isolated_home, "remember", "alpha fact").returncode == 0
    assert engram(isolated_home, "sync").returncode == 0
    (knowledge,) = (isolated_home / "memory").rglob("knowledge.md")
    knowledge.write_text(knowledge.read_text() + "stray text outside any bullet\n")
    result = engram(isolated_home, "sync")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("text outside a bullet") == 1, result.stderr


def test_a_home_engram_creates_is_its_owners_alone_and_an_existing_one_keeps_its_mode(tmp_path: Path) -> None:
    # Made with the defaults, the home holding every memory, backup and token was readable by every
    # local user (0755 under the usual umask).
    fresh = tmp_path / "fresh" / "engram-home"
    assert engram(fresh, "remember", "the vault code is in the drawer").returncode == 0
    assert fresh.stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "fresh").stat().st_mode & 0o077  # its parents are made as any folder
    existing = tmp_path / "shared-home"
    existing.mkdir(mode=0o755)
    existing.chmod(0o755)
    assert engram(existing, "remember", "a note").returncode == 0
    assert existing.stat().st_mode & 0o777 == 0o755


def test_maintain_job_help_names_every_job(isolated_home: Path) -> None:
    from engram.lifecycle import JOBS

    shown = " ".join(engram(isolated_home, "maintain", "--help").stdout.split())  # the help as one line, unwrapped
    said = shown.split("Only this job (repeatable):", 1)[1]
    assert all(f" {job}" in said.split(".", 1)[0] for job in JOBS), shown  # it said only "Only this job"


def test_remember_takes_tag_as_tags_repeatable(isolated_home: Path) -> None:
    # `--tag` (the filters' word) was refused by remember; each given, comma-separated or not, is a tag.
    stored = engram(isolated_home, "--json", "remember", "tagged", "--tag", "a", "--tag", "b", "--tags", "c, d")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout)["memory"]["tags"] == ["a", "b", "c", "d"]
    plain = engram(isolated_home, "--json", "remember", "untagged")
    assert json.loads(plain.stdout)["memory"]["tags"] == []


def test_update_takes_tag_as_tags_repeatable_like_remember(isolated_home: Path) -> None:
    # `engram update KEY --tag x` was a bare click "No such option: --tag" while remember took it.
    assert engram(isolated_home, "remember", "tagged", "--key", "k", "--tags", "old").returncode == 0
    changed = engram(isolated_home, "--json", "update", "k", "--tag", "a", "--tag", "b", "--tags", "c,d")
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout)["memory"]["tags"] == ["a", "b", "c", "d"]
    assert json.loads(engram(isolated_home, "--json", "get", "k").stdout)["tags"] == ["a", "b", "c", "d"]


def test_help_is_plain_text_with_typer_use_rich_off(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/cli.md: TYPER_USE_RICH=0 gives --help as plain text, without Rich's box drawing.
    monkeypatch.setenv("TYPER_USE_RICH", "0")
    shown = engram(isolated_home, "maintain", "--help")
    assert shown.returncode == 0 and "Usage: engram maintain" in shown.stdout
    assert not set("╭╮╰╯│─") & set(shown.stdout), shown.stdout


def _empty(shown: subprocess.CompletedProcess) -> str:
    """A listing that found nothing: exit 0, nothing on standard output (no table of headers alone,
    whose box a pipe gets), and its note on standard error, returned."""
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == "", shown.stdout
    return shown.stderr.strip()


def test_listings_that_find_nothing_say_so_on_stderr_as_recall_does(isolated_home: Path) -> None:
    # `engram list` on an agent with no memories printed a table of headers only (so did neighbours,
    # audit, token list and history show), where recall says nothing matched.
    assert _empty(engram(isolated_home, "-a", "alice", "list")) == (
        "nothing listed: no memory visible to agent alice (its own and global ones)")
    assert _empty(engram(isolated_home, "-a", "alice", "-s", "s1", "list")) == (
        "nothing listed: no memory visible to agent alice in session s1 (the session's, the agent's and global ones)")
    assert engram(isolated_home, "-a", "alice", "remember", "alpha fact", "--key", "a").returncode == 0
    assert _empty(engram(isolated_home, "-a", "alice", "list", "--tag", "none")) == (
        "nothing listed: no memory visible to agent alice (its own and global ones) matches the filters")
    assert _empty(engram(isolated_home, "-a", "alice", "list", "--scope", "global")) == (
        "nothing listed: no memory in the global scope")
    assert _empty(engram(isolated_home, "-a", "alice", "list", "--offset", "1")) == (
        "nothing listed: no memory visible to agent alice (its own and global ones) past --offset 1")
    assert _empty(engram(isolated_home, "-a", "alice", "neighbours", "a")) == (
        "nothing linked: no memory this agent sees is linked to a")
    assert _empty(engram(isolated_home, "-a", "alice", "audit", "--action", "linked")) == (
        "nothing in the audit trail: no entry matches the filters")
    assert _empty(engram(isolated_home, "-a", "bob", "audit")) == (
        "nothing in the audit trail: no entry about agent bob's memories or global ones")
    assert _empty(engram(isolated_home, "token", "list")) == (
        "no tokens (--all lists revoked ones too; engram token create --agent NAME makes one)")
    assert _empty(engram(isolated_home, "-a", "bob", "token", "list", "--all")) == (
        "no tokens for agent bob (engram token create --agent NAME makes one)")
    for command in (("list", "--tag", "none"), ("neighbours", "a"), ("audit", "--action", "linked"), ("token", "list")):
        as_json = engram(isolated_home, "--json", "-a", "alice", *command)
        assert as_json.returncode == 0 and as_json.stderr == "", as_json.stderr
        assert json.loads(as_json.stdout) == [], command
    assert "alpha fact" in engram(isolated_home, "-a", "alice", "list").stdout  # a list that finds one: its table



@pytest.mark.parametrize(("command", "note", "as_json"), [
    (("history", "list"), "no conversations", []),
    (("history", "summary", "web:[red]x"), "no summary of web:[red]x",  # the key as written, not read as markup
     {"key": "web:[red]x", "summary": ""}),
    (("conflicts",), "no conflicts", []),
    (("backup", "--list"), "no backups in {home}", []),
    (("summaries",), "no summaries yet (run `engram maintain` or `engram summaries --make`)", []),
    (("summaries", "--make"),
     "no summaries yet: no ended period holds memories (the current one is summarised once it ends)", []),
    (("forget", "--tag", "none"), "nothing to forget", {"dry_run": False, "removed": []}),
    (("forget", "--tag", "none", "--dry-run"), "nothing to forget", {"dry_run": True, "removed": []}),
])
def test_commands_that_find_nothing_say_so_on_stderr_not_as_a_line_of_output(
        isolated_home: Path, command: tuple[str, ...], note: str, as_json: object) -> None:
    # These printed their "nothing here" line on standard output, where a script reading it took it
    # for a conversation key, a summary, a backup or a row; `versions` likewise (test_versions_doors).
    assert _empty(engram(isolated_home, "-a", "alice", *command)) == note.format(home=isolated_home / "backups")
    shown = engram(isolated_home, "--json", "-a", "alice", *command)  # --json as before
    assert shown.returncode == 0 and shown.stderr == "", shown.stderr
    assert json.loads(shown.stdout) == as_json


def test_restore_with_no_backup_says_the_folder_holds_none_and_how_to_make_one(isolated_home: Path) -> None:
    # It said `backup not found: "…/backups"`, naming the folder as if it were a backup.
    for args in (("restore", "--yes"), ("--json", "restore", "--yes")):
        refused = engram(isolated_home, *args)
        assert refused.returncode == 3 and refused.stdout == "", refused.stdout
        assert refused.stderr.strip() == (f"error: no backups in {isolated_home / 'backups'} to restore"
                                          " (make one with: engram backup)")


def test_a_bad_agent_name_says_where_it_was_set(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Set in the environment, the refusal named only "agent" (exit 2, as if mistyped on the command line).
    monkeypatch.setenv("ENGRAM_AGENT", "a/b")
    from_env = engram(isolated_home, "list")
    assert from_env.returncode == 4, from_env.stderr
    assert from_env.stderr.strip() == ('error: invalid settings (agent: "a/b" is not a valid name (allowed: letters, digits'
                                       " and . _ : @ -, 1-128 chars) (from ENGRAM_AGENT))")
    typed = engram(isolated_home, "--agent", "a b", "list")  # typed: a usage error naming the option, as before
    assert typed.returncode == 2 and typed.stderr.startswith('error: --agent: "a b" is not a valid name'), typed.stderr


def test_a_conversation_listing_with_history_off_says_why_it_is_empty(isolated_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_HISTORY__ENABLED", "false")
    off = "conversation history is off (history.enabled = false)"
    assert _empty(engram(isolated_home, "-a", "alice", "history", "list")) == f"no conversations: {off}"
    assert _empty(engram(isolated_home, "-a", "alice", "history", "summary", "web:1")) == f"no summary of web:1: {off}"


@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_home_is_refused_naming_the_option_before_anything_is_made(tmp_path: Path, blank: str) -> None:
    # Typer read `--home ''` as the Path of ".": the run quietly kept its memory.db in the current folder.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["HOME"] = str(tmp_path / "user")  # the default home, were the option taken as absent
    for args in (("remember", "kept where?"), ("--json", "count")):
        done = subprocess.run([sys.executable, "-m", "engram", "--home", blank, *args], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=120)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert done.stderr.startswith("error: --home: must not be empty (allowed: a folder path"), done.stderr
        assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_home_that_is_a_file_is_refused_naming_it_and_the_file_is_left_as_it_was(tmp_path: Path) -> None:
    # `--home ~/.engram/memory.db` (the database named for its folder) read as an empty store: exit 0,
    # "0" memories; a write said the home was "not writable", to check the folder's permissions.
    from engram.config import load_settings
    from engram.errors import ConfigError

    database = tmp_path / "memory.db"
    database.write_bytes(b"SQLite format 3\x00 and the rest")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["HOME"] = str(tmp_path / "user")
    for args in (("--json", "count"), ("list",), ("remember", "kept where?")):
        done = subprocess.run([sys.executable, "-m", "engram", "--home", str(database), *args], capture_output=True,
                              text=True, env=env, timeout=120)
        assert done.returncode == 4, (done.stdout, done.stderr)
        assert done.stdout == ""
        assert f"home: {database} is a file, not a folder (allowed: " in done.stderr, done.stderr
    assert database.read_bytes() == b"SQLite format 3\x00 and the rest"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]
    with pytest.raises(ConfigError, match="home: .* is a file, not a folder"):
        load_settings(home=database)


@pytest.mark.parametrize("blank", ["", "  "])
@pytest.mark.parametrize("args", [("--config", "{}", "--json", "count"),
                                  ("mcp", "--config", "{}", "install", "-c", "claude", "--print"),
                                  ("mcp", "install", "-c", "claude", "--config", "{}")])
def test_an_empty_config_is_refused_naming_the_option_as_home_is(tmp_path: Path, blank: str, args: tuple[str, ...]) -> None:
    # It ended as "config file . does not exist" (exit 4, a configuration error), naming no option.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["HOME"] = str(tmp_path / "user")
    done = subprocess.run([sys.executable, "-m", "engram", *(blank if a == "{}" else a for a in args)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("error: --config: must not be empty (allowed: "), done.stderr
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []
