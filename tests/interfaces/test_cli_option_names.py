"""A bad value given to a CLI option is refused naming the option the user typed (``--tag``, not
the engine's ``tags``; ``--as-of``, not ``as_of``; ``--category``, not ``category``), as HTTP names
its ``?tag=``; nothing stored changes. The ``engram`` command as a real process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_cli import engram

LONG_TAG = "t" * 65
CONTROL_TAG = "bell\x07"


def test_each_option_is_named_as_typed(isolated_home: Path) -> None:
    assert engram(isolated_home, "remember", "the tulip bulbs are in the shed", "--key", "kept", "--tags", "garden",
                  ).returncode == 0
    for args, named in (
            (["list", "--tag", LONG_TAG], "--tag"),
            (["list", "--tag", "garden", "--tag", CONTROL_TAG], "--tag"),
            (["list", "--as-of", "not a time"], "--as-of"),
            (["list", "--known-at", "not a time"], "--known-at"),
            (["recall", "tulips", "--tag", CONTROL_TAG], "--tag"),
            (["recall", "tulips", "--min-relevance", "3"], "--min-relevance"),
            (["count", "--tag", LONG_TAG], "--tag"),
            (["forget", "--tag", CONTROL_TAG], "--tag"),
            (["update", "kept", "--tag", LONG_TAG], "--tags"),
            (["update", "kept", "--valid-until", "not a time"], "--valid-until"),
            (["remember", "a new one", "--valid-from", "not a time"], "--valid-from"),
    ):
        refused = engram(isolated_home, *args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert refused.stderr.startswith(f"error: {named}: "), (args, refused.stderr)
        assert "(allowed: " in refused.stderr, (args, refused.stderr)
    listed = json.loads(engram(isolated_home, "--json", "list").stdout)
    assert [(m["key"], m["tags"]) for m in listed] == [("kept", ["garden"])]


def test_an_option_that_is_its_fields_word_is_named_as_typed(isolated_home: Path) -> None:
    # ``--category`` fills the engine's ``category``: the error names the option, as ``--tag`` is named,
    # in every command (a subcommand of a group too); a positional argument keeps the field's word.
    assert engram(isolated_home, "remember", "the tulip bulbs are in the shed", "--key", "kept").returncode == 0
    for args, named in (
            (["list", "--category", "feelings"], "--category"),
            (["remember", "a new one", "--category", "feelings"], "--category"),
            (["remember", "a new one", "--importance", "3"], "--importance"),
            (["update", "kept", "--content", ""], "--content"),
            (["recall", "tulips", "--limit", "0"], "--limit"),
            (["list", "--where", '{"n": {"gte": true}}'], "--where.n.gte"),
            (["history", "append", "cli:1", "hello", "--role", "robot"], "--role"),
            (["summaries", "--period", "hourly"], "--period"),
            (["remember", ""], "content"),
    ):
        refused = engram(isolated_home, *args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert refused.stderr.startswith(f"error: {named}: "), (args, refused.stderr)
    listed = json.loads(engram(isolated_home, "--json", "list").stdout)
    assert [(m["key"], m["content"], m["importance"]) for m in listed] == [("kept", "the tulip bulbs are in the shed", 0.5)]
    assert json.loads(engram(isolated_home, "--json", "history", "list").stdout) == []


def test_clear_and_the_global_agent_and_session_are_named_as_typed(isolated_home: Path) -> None:
    # ``--clear content`` was named ``--content`` (an option not given), a bad ``--agent`` or
    # ``--session`` ``agent:`` / ``session:``, in a command and in a group's subcommand alike.
    assert engram(isolated_home, "remember", "the tulip bulbs are in the shed", "--key", "kept").returncode == 0
    for args, named in (
            (["update", "kept", "--clear", "content"], "--clear"),
            (["update", "kept", "--clear", "importance"], "--clear"),
            (["--agent", "bad agent!", "list"], "--agent"),
            (["--agent", "alice", "--session", "bad/session", "list"], "--session"),
            (["--agent", "bad agent!", "history", "list"], "--agent"),
    ):
        refused = engram(isolated_home, *args)
        assert refused.returncode == 2, (args, refused.stdout, refused.stderr)
        assert refused.stderr.startswith(f"error: {named}: "), (args, refused.stderr)
        assert "(allowed: " in refused.stderr, (args, refused.stderr)
    # A --scope naming a bad session is not the --session option.
    refused = engram(isolated_home, "list", "--scope", "session:alice/bad session")
    assert refused.returncode == 2 and not refused.stderr.startswith("error: --session"), refused.stderr
    listed = json.loads(engram(isolated_home, "--json", "list").stdout)
    assert [(m["key"], m["content"]) for m in listed] == [("kept", "the tulip bulbs are in the shed")]
