"""``engram history`` through the real entry point in a subprocess, on a real home folder."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from engram.engine import Engram
from engram.errors import ValidationError


def run(home: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(home)
    env.update(env_extra or {})
    code = "from engram.interfaces.cli.app import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


def test_history_commands_end_to_end(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path) as engram:  # the bulk through the library: same settings, same file
        for n in range(7):
            engram.history.append("telegram:42", "user", f"question {n}")
            engram.history.append("telegram:42", "assistant", f"answer {n}")
    assert run(tmp_path, "history", "append", "telegram:42", "question 7").returncode == 0
    assert run(tmp_path, "history", "append", "telegram:42", "--role", "assistant", "answer 7").returncode == 0
    shown = json.loads(run(tmp_path, "--json", "history", "show", "telegram:42", "-n", "3").stdout)
    assert shown["count"] == 16 and [m["content"] for m in shown["messages"]] == ["answer 6", "question 7", "answer 7"]
    assert (tmp_path / "memory.db").exists()  # same database file as the memories

    bad = run(tmp_path, "history", "append", "telegram:42", "--role", "tool", "--tool-call-id", "nope", "x")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --tool-call-id: ")
    assert run(tmp_path, "history", "show", "not a key").returncode == 2

    compacted = json.loads(run(tmp_path, "--json", "history", "compact", "telegram:42", "--force").stdout)
    assert compacted["compacted"] and compacted["kept"] == 10 and compacted["discarded"] == 6
    summary = json.loads(run(tmp_path, "--json", "history", "summary", "telegram:42").stdout)["summary"]
    assert "covered: 3 user messages, 3 assistant responses" in summary
    assert "we talked" in run(tmp_path, "history", "summary", "telegram:42", "--set", "we talked").stdout

    assert run(tmp_path, "history", "purge", "telegram:42", "--yes").returncode == 0
    after = json.loads(run(tmp_path, "--json", "history", "show", "telegram:42").stdout)
    assert after["count"] == 0 and after["summary"] == ""


def test_history_list_shows_keys_as_written_and_each_one_is_taken_back(tmp_path: Path) -> None:
    for agent, key in (("default", "telegram:42"), ("default", "web:chat-1:"), ("default", "slack:C1:T7"),
                       ("bob", "web:bobs")):
        assert run(tmp_path, "--agent", agent, "history", "append", key, f"said in {key}").returncode == 0
    listed = json.loads(run(tmp_path, "--json", "history", "list").stdout)
    assert listed == [{"key": k, "messages": 1} for k in ("slack:C1:T7", "telegram:42", "web:chat-1")]
    human = run(tmp_path, "history", "list").stdout
    assert "web:chat-1  (1 message)" in human and "web:chat-1:" not in human and "bobs" not in human
    for item in listed:  # a listed key shows and purges its conversation
        shown = json.loads(run(tmp_path, "--json", "history", "show", item["key"]).stdout)
        assert [m["content"] for m in shown["messages"]] == [f"said in {item['key']}" + (":" if item["key"] ==
                                                                                           "web:chat-1" else "")]
    assert run(tmp_path, "history", "purge", "web:chat-1", "--yes").returncode == 0
    assert [i["key"] for i in json.loads(run(tmp_path, "--json", "history", "list").stdout)] == ["slack:C1:T7",
                                                                                                "telegram:42"]
    assert json.loads(run(tmp_path, "--agent", "bob", "--json", "history", "list").stdout) == [
        {"key": "web:bobs", "messages": 1}]


def test_keys_and_summaries_are_printed_as_written_not_as_emoji_or_markup(tmp_path: Path) -> None:
    # rich read "a:b:c" as the emoji code :b: (printing a🅱c) and "[red]" in a key or summary as markup.
    assert run(tmp_path, "remember", "kept", "--key", "x:b:[red]k").stdout.startswith("stored: x:b:[red]k (")
    for key in ("a:b:c", "web:[red]x"):
        assert run(tmp_path, "history", "append", key, "hi").stdout.strip() == f"appended user message to {key}"
    assert run(tmp_path, "history", "list").stdout.splitlines() == ["a:b:c  (1 message)", "web:[red]x  (1 message)"]
    assert "[red]sum :b:" in run(tmp_path, "history", "summary", "a:b:c", "--set", "[red]sum :b:").stdout
    shown = run(tmp_path, "history", "show", "a:b:c").stdout
    assert "summary: [red]sum :b:" in shown and "a:b:c (1 message)" in shown
    assert run(tmp_path, "history", "purge", "web:[red]x", "-y").stdout.strip() == "purged 1 message from web:[red]x"


def test_showing_a_conversation_without_messages_says_so_on_stderr_not_as_an_empty_table(tmp_path: Path) -> None:
    # `history show` of a conversation with no messages printed a table of headers only, where
    # recall says on standard error that nothing matched.
    empty = run(tmp_path, "history", "show", "web:[red]x")
    assert empty.returncode == 0 and empty.stdout == "", empty.stdout
    assert empty.stderr.strip() == "no messages in web:[red]x"  # the key as written, not read as markup
    assert json.loads(run(tmp_path, "--json", "history", "show", "web:[red]x").stdout) == {
        "key": "web:[red]x", "summary": "", "count": 0, "messages": []}
    assert run(tmp_path, "history", "summary", "web:[red]x", "--set", "earlier talk").returncode == 0
    summarised = run(tmp_path, "history", "show", "web:[red]x")  # a summary stays when compaction drops every message
    assert summarised.stdout.strip() == "summary: earlier talk" and summarised.stderr.strip() == "no messages in web:[red]x"


def test_transcript_reports_its_file_and_count_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "notes [red]"  # a path rich would read as markup
    (tmp_path / "config.toml").write_text(f'[history]\ntranscripts_dir = "{folder}"\n')
    assert run(tmp_path, "history", "append", "telegram:42", "hello").returncode == 0
    wrote = run(tmp_path, "history", "transcript", "telegram:42").stdout.strip()
    assert wrote == f"wrote {folder / 'default' / 'telegram_42.md'} (1 message)"


def test_jsonl_backend_from_settings(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[history]\nbackend = "jsonl"\nmax_entries = 2\n')
    with Engram.from_settings(home=tmp_path, history={"backend": "jsonl", "max_entries": 2}) as engram:
        for n in range(2):
            engram.history.append("cli:me", "user", f"q{n}")
    assert run(tmp_path, "history", "append", "cli:me", "q2").returncode == 0
    lines = (tmp_path / "conversation-history.jsonl").read_text().splitlines()
    assert [json.loads(line)["userMessage"] for line in lines] == ["q1", "q2"]


def test_transcript_command_writes_and_indexes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run(home, *args)

    assert cli("history", "append", "web:1", "I just adopted a greyhound named Pixel", "--role", "user").returncode == 0
    assert cli("history", "append", "web:1", "Congratulations on adopting Pixel!", "--role", "assistant").returncode == 0
    assert cli("history", "append", "web:1", "thanks", "--role", "user").returncode == 0
    result = cli("--json", "history", "transcript", "web:1", "--index")
    assert result.returncode == 0, result.stderr
    path = Path(json.loads(result.stdout)["path"])
    text = path.read_text()
    assert "# Session Transcript: web:1" in text and "**User**: I just adopted a greyhound named Pixel" in text
    assert "[Indexed:" in text
    found = json.loads(cli("--json", "recall", "greyhound").stdout)
    assert any("Pixel" in hit["memory"]["content"] for hit in found["hits"])


def test_a_bare_session_id_is_refused_with_how_to_write_it_and_transcripts_go_where_the_docs_say(
        tmp_path: Path) -> None:
    bare = run(tmp_path, "history", "append", "sess_123", "hello")
    assert bare.returncode == 2 and '"sess_123" names no channel' in bare.stderr and '"cli:sess_123"' in bare.stderr
    assert run(tmp_path, "history", "append", "cli:sess_123", "Which database should the project use?").returncode == 0
    written = run(tmp_path, "--json", "history", "transcript", "cli:sess_123")
    path = Path(json.loads(written.stdout)["path"])
    # docs/history.md: <transcripts_dir>/<agent>/<name>.md, a part with "_" named with a digest.
    assert path.parent == tmp_path / "transcripts" / "default" and path.name.startswith("cli_sess_123__"), path
    assert path.read_text().startswith("# Session Transcript: cli:sess_123\nStarted: 20")
    empty = Path(json.loads(run(tmp_path, "--json", "history", "transcript", "cli:nothing-yet").stdout)["path"])
    assert empty.read_text() == "# Session Transcript: cli:nothing-yet\n"  # not "Started: 1970-01-01..."
    assert empty == tmp_path / "transcripts" / "default" / "cli_nothing-yet.md"


def test_history_compact_uses_the_configured_llm_summariser(tmp_path: Path) -> None:
    """`engram history compact` goes through the agent's compaction path (History.compact) with the
    configured summariser: the LLM's summary replaces the count summary it used to write."""
    from engram.testing.llm_servers import OpenAICompatServer, Reply

    with Engram.from_settings(home=tmp_path) as engram:
        for n in range(8):
            engram.history.append("telegram:42", "user", f"question {n}")
            engram.history.append("telegram:42", "assistant", f"answer {n}")
    with OpenAICompatServer(Reply.say("The user asked eight numbered questions.")) as server:
        (tmp_path / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.base_url}"\napi_key = "test"\n'
            '[chat]\nsynthesis = false\n')
        compacted = json.loads(run(tmp_path, "--json", "history", "compact", "telegram:42", "--force").stdout)
        assert len(server.requests) == 1
    assert compacted["compacted"] and compacted["kept"] == 10 and compacted["discarded"] == 6
    assert compacted["summary"] == "The user asked eight numbered questions."
    summary = json.loads(run(tmp_path, "--json", "history", "summary", "telegram:42").stdout)["summary"]
    assert summary == "The user asked eight numbered questions."


def test_transcripts_are_per_agent_and_never_shared_between_keys(tmp_path: Path) -> None:
    """Two agents with one key each keep their own transcript; two keys that sanitise alike
    (web:a/b, web:a_b) keep a file each. Every file is read after all were written."""
    def transcript(*args: str) -> Path:
        result = run(tmp_path, "--json", *args)
        assert result.returncode == 0, result.stderr
        return Path(json.loads(result.stdout)["path"])

    for agent in ("alice", "bob"):
        assert run(tmp_path, "--agent", agent, "history", "append", "telegram:42",
                   f"{agent} is planning the migration of the billing database").returncode == 0
    alice = transcript("--agent", "alice", "history", "transcript", "telegram:42", "--index")
    bob = transcript("--agent", "bob", "history", "transcript", "telegram:42")
    assert run(tmp_path, "history", "append", "web:a/b", "one").returncode == 0
    assert run(tmp_path, "history", "append", "web:a_b", "two").returncode == 0
    one, two = transcript("history", "transcript", "web:a/b"), transcript("history", "transcript", "web:a_b")

    assert "alice is planning" in alice.read_text() and "bob" not in alice.read_text()
    assert "bob is planning" in bob.read_text() and "alice" not in bob.read_text()
    assert "**User**: one" in one.read_text() and "two" not in one.read_text()
    assert "**User**: two" in two.read_text() and "one" not in two.read_text()


def test_compacting_one_message_says_so_in_the_singular(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app

    runner = CliRunner()
    assert runner.invoke(app, ["--home", str(tmp_path), "history", "append", "telegram:42", "hello"]).exit_code == 0
    result = runner.invoke(app, ["--home", str(tmp_path), "history", "compact", "telegram:42", "--force"])
    assert result.exit_code == 0, result.output
    assert "only 1 message," in " ".join(result.output.split())


def test_compact_under_the_limits_names_them_and_the_emergency_path_says_so(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path) as engram:
        for n in range(3):
            engram.history.append("telegram:42", "user", f"question {n}")
    few = run(tmp_path, "history", "compact", "telegram:42")
    assert few.returncode == 0, few.stderr
    assert few.stdout == ""  # nothing done: a note on stderr, as forget's "nothing to forget"
    said = " ".join(few.stderr.split())
    assert said.startswith("nothing to compact: 3 messages and ~")
    assert "not more than history.compaction.min_messages = 12" in said
    assert "not more than history.compaction.max_history_messages = 50" in said
    assert "history.compaction.token_threshold x history.compaction.token_limit = 0.75 x 128000 = 96000 tokens" in said

    with Engram.from_settings(home=tmp_path) as engram:
        for n in range(3, 23):
            engram.history.append("telegram:42", "user", f"question {n}")
    between = " ".join(run(tmp_path, "history", "compact", "telegram:42").stderr.split())
    assert between.startswith("nothing to compact: 23 messages")  # past min_messages: only the other two are named
    assert "min_messages" not in between and "history.compaction.max_history_messages = 50" in between

    small_window = {"ENGRAM_HISTORY__COMPACTION__TOKEN_LIMIT": "100"}  # 23 messages overflow 100 tokens
    emergency = run(tmp_path, "history", "compact", "telegram:42", env_extra=small_window)
    assert emergency.returncode == 0, emergency.stderr
    assert emergency.stdout.startswith("discarded 19 messages, kept 4; ")
    warned = " ".join(emergency.stderr.split())
    assert warned.startswith("emergency path: ~")
    assert "history.compaction.emergency_ratio x history.compaction.token_limit = 1 x 100" in warned
    assert "history.compaction.emergency_retain = 4 messages" in warned
    data = json.loads(run(tmp_path, "--json", "history", "compact", "telegram:42").stdout)
    assert not data["compacted"] and "min_messages = 12" in data["notes"][0]


def test_append_messages_from_a_file_or_stdin_all_or_none(tmp_path: Path) -> None:
    turn = [{"role": "user", "content": "What's the weather in Lisbon?"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "weather", "arguments": {"city": "Lisbon"}}]},
            {"role": "tool", "content": "sunny, 24\u00b0C", "tool_call_id": "c1"},
            {"role": "assistant", "content": "Sunny and 24\u00b0C.\r\n  "}]
    source = tmp_path / "turn.json"
    source.write_text(json.dumps(turn), encoding="utf-8")
    done = run(tmp_path, "history", "append", "cli:lisbon", "--messages", str(source))
    assert done.returncode == 0 and "appended 4 messages to cli:lisbon" in done.stdout, done.stderr
    shown = json.loads(run(tmp_path, "--json", "history", "show", "cli:lisbon", "-n", "0").stdout)
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [(m["role"], m.get("content", "")) for m in turn]
    # A refused message anywhere stores none of the list, and is named by its place.
    orphan = json.dumps([{"role": "user", "content": "and tomorrow?"},
                         {"role": "tool", "content": "rain", "tool_call_id": "c9"}])
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")} | {"ENGRAM_HOME": str(tmp_path)}
    refused = subprocess.run([sys.executable, "-c", "from engram.interfaces.cli.app import main; main()",
                              "history", "append", "cli:lisbon", "--messages", "-"],
                             input=orphan, capture_output=True, text=True, env=env, timeout=60)
    assert refused.returncode == 2 and "messages[1].tool_call_id" in refused.stderr, refused.stderr
    for args, named in ((("--messages", str(tmp_path / "missing.json")), "does not exist"),
                        (("--messages", str(tmp_path / "memory.db")), "messages"),
                        (("some text", "--messages", str(source)), "either --messages FILE")):
        bad = run(tmp_path, "history", "append", "cli:lisbon", *args)
        assert bad.returncode == 2 and "messages" in bad.stderr and named in bad.stderr, bad.stderr
    source.write_text('{"role": "user", "content": "one, not a list"}', encoding="utf-8")
    bad = run(tmp_path, "history", "append", "cli:lisbon", "--messages", str(source))
    assert bad.returncode == 2 and "a list of messages" in bad.stderr, bad.stderr
    assert json.loads(run(tmp_path, "--json", "history", "show", "cli:lisbon").stdout)["count"] == len(turn)


def test_a_turn_indexed_automatically_and_by_transcript_index_is_one_memory(tmp_path: Path) -> None:
    # Automatic indexing has the stored key (cli:trip:), the command the key as typed (cli:trip):
    # both name the turn's memory transcript:cli:trip:1, so the second indexing updates the first.
    (tmp_path / "config.toml").write_text("[history]\ntranscript_auto_index = true\n")
    assert run(tmp_path, "history", "append", "cli:trip", "Which train goes from Lyon to Turin on Sunday?").returncode == 0
    assert run(tmp_path, "history", "append", "cli:trip", "--role", "assistant",
               "The 10:04 TGV via Chambéry, arriving at 14:30.").returncode == 0
    indexed = run(tmp_path, "history", "transcript", "cli:trip", "--index")
    assert indexed.returncode == 0, indexed.stderr
    listed = json.loads(run(tmp_path, "--json", "list", "--tag", "transcript").stdout)
    memories = listed["memories"] if isinstance(listed, dict) else listed
    assert [(m["key"], m["metadata"]["session"]) for m in memories] == [("transcript:cli:trip:1", "cli:trip")]


def test_history_count_prints_the_number_alone_as_sclaws_len(tmp_path: Path) -> None:
    # sclaw's HistoryStore `Len(sessionID)`; docs/history.md: `engram history count KEY`.
    assert run(tmp_path, "history", "count", "telegram:42").stdout == "0\n"  # none yet: 0, not an error
    for text in ("one", "two"):
        assert run(tmp_path, "history", "append", "telegram:42", text).returncode == 0
    assert run(tmp_path, "--agent", "bob", "history", "append", "telegram:42", "bob's").returncode == 0
    assert run(tmp_path, "history", "count", "telegram:42:").stdout == "2\n"  # the same key; bob's not counted
    assert json.loads(run(tmp_path, "--json", "history", "count", "telegram:42").stdout) == {"key": "telegram:42",
                                                                                            "count": 2}
    bad = run(tmp_path, "history", "count", "not a key")
    assert bad.returncode == 2 and bad.stderr.startswith("error: key: ") and not bad.stdout


def test_messages_given_as_json_text_is_refused_as_not_a_file_without_echoing_it(tmp_path: Path) -> None:
    # Review: `--messages '<json>'` (the JSON where its file goes) repeated the whole JSON back, twice
    # (once quoted, once in OSError's own text): a long argument flooded the terminal.
    long = json.dumps([{"role": "user", "content": "x" * 5000}])
    for given in (long, '[{"role": "user", "content": "hi"}]'):
        bad = run(tmp_path, "history", "append", "cli:1", "--messages", given)
        assert bad.returncode == 2 and bad.stdout == "", bad.stderr
        assert bad.stderr.startswith("error: --messages: takes a file path, not the JSON itself: no file "), bad.stderr
        assert "- to read the document from standard input" in bad.stderr
        assert len(bad.stderr) < 400 and "Errno" not in bad.stderr  # shown cut, once
    # A file that is not there: named, cut as well, without OSError's own repetition of the path.
    missing = tmp_path / ("m" * 150) / ("m" * 150 + ".json")
    bad = run(tmp_path, "history", "append", "cli:1", "--messages", str(missing))
    assert bad.returncode == 2 and "error: --messages: " in bad.stderr and " does not exist " in bad.stderr, bad.stderr
    assert "m" * 250 not in bad.stderr and "Errno" not in bad.stderr
    assert "or - for standard input" in bad.stderr
    assert json.loads(run(tmp_path, "--json", "history", "show", "cli:1").stdout)["count"] == 0


def test_history_show_with_a_limit_past_any_conversation_shows_it_all(tmp_path: Path) -> None:
    """``--limit 99999999999999999999`` is "more than there are": every message, exit 0, not an
    internal error (exit 1) from the SQLite driver's 64-bit bound."""
    for text in ("first", "second"):
        assert run(tmp_path, "history", "append", "telegram:42", text).returncode == 0
    shown = run(tmp_path, "--json", "history", "show", "telegram:42", "--limit", "99999999999999999999")
    assert shown.returncode == 0, shown.stderr
    assert [m["content"] for m in json.loads(shown.stdout)["messages"]] == ["first", "second"]


def test_a_confirmation_answered_on_piped_input_leaves_stdout_one_json_document(tmp_path: Path) -> None:
    """``echo y | engram --json history purge KEY`` (and ``restore``) printed the question on
    standard output before the JSON, so the output no longer parsed: the question goes to standard
    error with the other status lines; an answer "n" still deletes nothing."""
    def answered(answer: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
        code = "from engram.interfaces.cli.app import main; main()"
        return subprocess.run([sys.executable, "-c", code, "--json", *args], input=answer, capture_output=True,
                              text=True, env=env, timeout=60)

    assert run(tmp_path, "history", "append", "telegram:42", "hello").returncode == 0
    declined = answered("n\n", "history", "purge", "telegram:42")
    assert declined.returncode == 0 and json.loads(declined.stdout) == {"key": "telegram:42", "purged": 0}
    assert "Delete 1 message and the summary of telegram:42? [y/N]: " in declined.stderr
    purged = answered("y\n", "history", "purge", "telegram:42")
    assert purged.returncode == 0, purged.stderr
    assert json.loads(purged.stdout) == {"key": "telegram:42", "purged": 1} and "Delete 1 message" in purged.stderr
    assert run(tmp_path, "backup").returncode == 0
    restored = answered("y\n", "restore")
    assert restored.returncode == 0, restored.stderr
    assert json.loads(restored.stdout)["database"].endswith("memory.db") and "replace " in restored.stderr


def test_a_declined_confirmation_exits_0_saying_nothing_was_done(tmp_path: Path) -> None:
    """``engram history purge KEY`` and ``engram restore`` answered "n", or not at all (no input),
    exited 1 ("Aborted."), the code the exit table keeps for a storage or provider failure: the
    user chose, nothing is done, exit 0 with a note on standard error, the database untouched."""
    def answered(answer: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
        code = "from engram.interfaces.cli.app import main; main()"
        return subprocess.run([sys.executable, "-c", code, *args], input=answer, capture_output=True,
                              text=True, env=env, timeout=60)

    assert run(tmp_path, "history", "append", "telegram:42", "hello").returncode == 0
    assert run(tmp_path, "backup").returncode == 0
    assert run(tmp_path, "history", "append", "telegram:42", "after the backup").returncode == 0
    for answer in ("n\n", ""):  # "n", and no answer at all (end of input)
        purge = answered(answer, "history", "purge", "telegram:42")
        assert (purge.returncode, purge.stdout) == (0, ""), purge.stderr
        assert purge.stderr.endswith("nothing purged from telegram:42: not confirmed (--yes skips the question)\n")
        restore = answered(answer, "restore")
        assert (restore.returncode, restore.stdout) == (0, ""), restore.stderr
        assert "nothing restored into " in restore.stderr and "not confirmed" in restore.stderr
        as_json = answered(answer, "--json", "restore")
        assert as_json.returncode == 0 and json.loads(as_json.stdout)["restored"] is None
    with Engram.from_settings(home=tmp_path) as engram:
        assert [m.content for m in engram.history.all("telegram:42")] == ["hello", "after the backup"]


def test_history_append_refuses_an_empty_list_of_messages_as_http_does(tmp_path: Path) -> None:
    """``engram history append KEY --messages FILE`` of ``[]`` said "appended 0 messages" (exit 0)
    where HTTP's ``POST .../messages`` refused an empty batch: exit 2 naming ``--messages``."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    done = run(tmp_path, "history", "append", "cli:42", "--messages", str(empty))
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == "error: --messages: the list is empty (allowed: a list of at least 1 message)\n"
    with Engram.from_settings(home=tmp_path) as engram:
        assert not engram.history.conversations()


def test_an_empty_summary_is_refused_naming_set_and_clear_removes_the_summary(tmp_path: Path) -> None:
    """``engram history summary KEY --set ''`` (an unset variable in ``--set "$SUMMARY"``) cleared the
    summary, exit 0: refused now, exit 2 naming ``--set`` and saying how a summary is removed, the
    summary kept, as a memory's empty content is refused. ``--clear`` removes it (the messages stay);
    from Python, ``set_summary(key, "")`` is refused naming ``summary`` and ``clear_summary`` removes it."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.history.append("telegram:42", "user", "hello")
        engram.history.set_summary("telegram:42", "User is planning a trip")
        for blank in ("", "  \n\t"):
            try:
                engram.history.set_summary("telegram:42", blank)
            except ValidationError as exc:
                assert exc.field == "summary" and "clear_summary" in exc.allowed
            else:
                raise AssertionError(f"set_summary({blank!r}) was taken")
        assert engram.history.summary("telegram:42") == "User is planning a trip"
    for blank in ("", "  \n\t"):
        refused = run(tmp_path, "history", "summary", "telegram:42", "--set", blank)
        assert (refused.returncode, refused.stdout) == (2, ""), refused.stderr
        assert refused.stderr.startswith("error: --set: must not be empty") and "--clear" in refused.stderr
    both = run(tmp_path, "history", "summary", "telegram:42", "--set", "new", "--clear")
    assert both.returncode == 2 and both.stderr.startswith("error: --clear: cannot be given with --set")
    assert json.loads(run(tmp_path, "--json", "history", "summary", "telegram:42").stdout)["summary"] == "User is planning a trip"
    cleared = run(tmp_path, "--json", "history", "summary", "telegram:42", "--clear")
    assert cleared.returncode == 0 and json.loads(cleared.stdout) == {"key": "telegram:42", "summary": "", "cleared": True}
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        assert engram.history.summary("telegram:42") == "" and engram.history.count("telegram:42") == 1
        engram.history.set_summary("telegram:42", "again")
        engram.history.clear_summary("telegram:42")
        assert engram.history.summary("telegram:42") == "" and engram.history.count("telegram:42") == 1


def test_clearing_the_summary_of_no_conversation_changes_nothing_and_says_so(tmp_path: Path) -> None:
    """``clear_summary`` of a conversation that does not exist wrote an empty summary entry, which
    ``history list`` then showed as a conversation of 0 messages: nothing is written now, and the
    library (False), the CLI (``cleared``: false, a note) say nothing was cleared."""
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        engram.history.append("telegram:42", "user", "hello")
        assert engram.history.clear_summary("ghost:1") is False
        assert engram.history.conversations() == ["telegram:42"]
        engram.history.set_summary("telegram:42", "greeted")
        assert engram.history.clear_summary("telegram:42") is True and engram.history.clear_summary("telegram:42") is False
    ghost = run(tmp_path, "--json", "history", "summary", "ghost:2", "--clear")
    assert ghost.returncode == 0 and json.loads(ghost.stdout) == {"key": "ghost:2", "summary": "", "cleared": False}
    plain = run(tmp_path, "history", "summary", "ghost:3", "--clear")
    assert (plain.returncode, plain.stdout) == (0, "") and "no summary of ghost:3 to clear: nothing changed" in plain.stderr
    listed = run(tmp_path, "--json", "history", "list")
    assert listed.returncode == 0 and "ghost" not in listed.stdout and "telegram:42" in listed.stdout, listed.stdout
    # An empty entry an earlier version wrote is no conversation either (no migration needed).
    with sqlite3.connect(tmp_path / "memory.db") as conn:
        agent = conn.execute("SELECT agent FROM history_messages LIMIT 1").fetchone()[0]
        conn.execute("INSERT INTO history_summaries (agent, conversation, summary, updated_at) VALUES (?, ?, ?, 0)",
                     (agent, "old:1", ""))
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}) as engram:
        assert engram.history.conversations() == ["telegram:42"]


def test_history_recall_finds_earlier_exchanges_of_this_agent_only_and_names_what_it_refuses(tmp_path: Path) -> None:
    # Clawless's semantic recall, as HTTP's /api/memory/semantic-recall and MCP's semantic_recall answer it.
    with Engram.from_settings(home=tmp_path, agent="alice") as alice:
        for key, user, bot in (("telegram:42", "My dog is called Biscuit", "Biscuit is a lovely name."),
                               ("web:7", "The quarterly report is due Friday", "I will remind you on Thursday.")):
            alice.history.append(key, "user", user)
            alice.history.append(key, "assistant", bot)
        expected = alice.history.semantic_recall("what is my puppy called", key="42", top_k=1).recap
    found = run(tmp_path, "--agent", "alice", "--json", "history", "recall", "what is my puppy called", "--chat", "42",
                "--top-k", "1")
    assert found.returncode == 0, found.stderr
    body = json.loads(found.stdout)
    assert [(e["userMessage"], e["chatId"], e["platform"], e["conversation"]) for e in body["entries"]] == [
        ("My dog is called Biscuit", "42", "telegram", "telegram:42")]
    assert body["recap"] == expected and "Biscuit" in expected
    human = run(tmp_path, "--agent", "alice", "history", "recall", "quarterly report", "--chat", "web:7", "-k", "1")
    assert human.returncode == 0 and human.stdout.startswith("[Conversation recap]") and "due Friday" in human.stdout
    assert "Biscuit" not in human.stdout

    for args in (("dog",), ("dog", "--chat", "telegram:42"), ("report", "--chat", "7", "-k", "100")):
        bob = run(tmp_path, "--agent", "bob", "--json", "history", "recall", *args)
        assert bob.returncode == 0 and json.loads(bob.stdout) == {"entries": [], "recap": ""}, (args, bob.stderr)
        plain = run(tmp_path, "--agent", "bob", "history", "recall", *args)
        assert plain.stdout == "" and "no earlier exchange like it" in plain.stderr

    for args, field in ((("",), "query"), (("   ",), "query"), (("dog", "--top-k", "0"), "--top-k"),
                        (("dog", "-k", "101"), "--top-k"), (("dog", "--top-k", "three"), "--top-k"),
                        (("dog", "--chat", "a b"), "--chat"), (("dog", "--chat", "web:"), "--chat"),
                        (("dog", "--chat", "a:b:c:d"), "--chat")):
        refused = run(tmp_path, "--agent", "alice", "history", "recall", *args)
        assert refused.returncode == 2 and field in refused.stderr and refused.stdout == "", (args, refused.stderr)
        if field != "--top-k" or args[-1] != "three":  # (click's own words for text where a number goes)
            assert refused.stderr.startswith(f"error: {field}: "), (args, refused.stderr)
    with Engram.from_settings(home=tmp_path, agent="alice") as alice:  # nothing lost
        assert alice.history.conversations() == ["telegram:42", "web:7"] and alice.history.count("web:7") == 2


def test_a_key_typed_with_bytes_that_are_not_utf8_is_refused_naming_it(tmp_path: Path) -> None:
    # The shell passes them on; Python reads each as a lone surrogate (\udcff), which the key's
    # pattern let through and every store failed to encode: "internal error: UnicodeEncodeError".
    assert run(tmp_path, "history", "append", "web:1", "kept").returncode == 0
    for args in (("history", "append", "web:\udcff", "hello"), ("history", "summary", "web:\udcff", "--set", "hi"),
                 ("history", "append", "web:1:t\udcff", "hello")):
        refused = run(tmp_path, *args)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith('error: key: contains a lone surrogate ("\\udcff")'), refused.stderr
    listed = json.loads(run(tmp_path, "--json", "history", "list").stdout)
    assert listed == [{"key": "web:1", "messages": 1}], listed


def test_history_recall_with_semantic_recall_off_says_so(tmp_path: Path) -> None:
    # Clawless's troubleshooting ("No semantic recap appears: verify CONVERSATION_SEMANTIC_RECALL_ENABLED")
    # was answered "no earlier exchange like it", as if the exchanges had been searched.
    with Engram.from_settings(home=tmp_path) as engram:
        engram.history.append("telegram:42", "user", "My dog is called Biscuit")
        engram.history.append("telegram:42", "assistant", "Biscuit is a lovely name.")
    for env in ({"CONVERSATION_SEMANTIC_RECALL_ENABLED": "false"}, {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}):
        said = run(tmp_path, "history", "recall", "what is my dog called", env_extra=env)
        assert said.returncode == 0 and said.stdout == "", said.stderr
        assert said.stderr.strip() == ("no earlier exchange like it: semantic recall is off (history.semantic = false,"
                                       " or no embedding model: embeddings.provider = none)"), said.stderr
    found = run(tmp_path, "history", "recall", "what is my dog called")
    assert "Biscuit" in found.stdout, found.stderr


def test_a_transcript_written_without_index_still_marks_the_turns_indexed(tmp_path: Path) -> None:
    # Automatic indexing wrote "[Indexed: ...]" under the turn it stored; `history transcript KEY`
    # (without --index) then rewrote the same file without it, as if no turn were a memory.
    (tmp_path / "config.toml").write_text("[history]\ntranscript_auto_index = true\n")
    assert run(tmp_path, "history", "append", "cli:trip", "Which train goes from Lyon to Turin on Sunday?").returncode == 0
    assert run(tmp_path, "history", "append", "cli:trip", "--role", "assistant",
               "The 10:04 TGV via Chambéry, arriving at 14:30.").returncode == 0
    assert run(tmp_path, "history", "append", "cli:trip", "thanks").returncode == 0
    assert run(tmp_path, "history", "append", "cli:trip", "--role", "assistant", "you're welcome").returncode == 0
    path = tmp_path / "transcripts" / "default" / "cli_trip.md"
    automatic = path.read_text(encoding="utf-8")
    assert automatic.count("[Indexed: ") == 1, automatic  # the thanks are not a memory
    written = run(tmp_path, "history", "transcript", "cli:trip")
    assert written.returncode == 0, written.stderr
    assert path.read_text(encoding="utf-8") == automatic
