"""``engram migrate`` run again after both the SQLite file and PostgreSQL were used since the copy:
a token used or revoked on either side is one token (the later use, any revocation kept), a
conversation that got messages on both sides is merged in time order, nothing copied twice; a
token id naming another token is still a clash."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from engram.auth import PostgresTokenStore
from engram.config import load_settings
from engram.db.postgres import PgDatabase
from engram.db.transfer import copy_sqlite_to_postgres
from engram.root import open_history, open_tokens
from tests.postgres.test_migrate_changed_file import _run_single
from tests.postgres.test_migrate_per_agent import _home, _per_agent, _run


def _tokens_there(pg_url: str) -> dict[str, tuple[object, object]]:
    """Each token in the database: (last use, revocation)."""
    db = PgDatabase.connect(pg_url)
    try:
        with db.read() as conn:
            return {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, last_used_at, revoked_at FROM api_tokens")}
    finally:
        db.close()


def test_tokens_used_or_revoked_on_either_side_since_the_copy_are_one_token_each(pg_url: str, tmp_path: Path) -> None:
    home, used_there = _home(tmp_path)  # bob's token, in home/auth.db
    tokens = open_tokens(_per_agent(home, "alice"))
    try:
        revoked_here, revoked_here_info = tokens.create("alice", "old phone")
        revoked_there, revoked_there_info = tokens.create("alice", "tablet")
    finally:
        tokens.close()
    assert _run(home, "migrate", "--to", pg_url).returncode == 0

    db = PgDatabase.connect(pg_url)
    try:
        there = PostgresTokenStore(db, owns_db=False)
        assert there.verify(used_there) is not None  # its last use, written there
        there.revoke(revoked_there_info.id)
    finally:
        db.close()
    tokens = open_tokens(_per_agent(home, "alice"))  # the file, used since: a use, a revocation, a new token
    try:
        assert tokens.verify(revoked_there) is not None  # used here before it was revoked there
        tokens.revoke(revoked_here_info.id)
        new, new_info = tokens.create("bob", "desktop")
    finally:
        tokens.close()
    before = _tokens_there(pg_url)
    with closing(sqlite3.connect(home / "auth.db")) as conn:
        in_file = {row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, last_used_at, revoked_at FROM api_tokens")}
    used_id = next(token_id for token_id, (used, _) in before.items() if used is not None)

    again = _run(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    auth = next(f for f in json.loads(again.stdout)["files"] if f["source"].endswith("auth.db"))
    assert auth["verified"] and auth["changed_since"] and auth["refused"] is None
    assert auth["tables"]["api_tokens"]["copied"] == 1 and auth["tables"]["api_tokens"]["resolved"] == 3
    notes = {note.split(" ", 2)[1]: note for note in auth["resolved"]}
    assert set(notes) == {used_id, revoked_here_info.id, revoked_there_info.id}
    assert "stays revoked (revoked there)" in notes[revoked_there_info.id]
    assert "this file's later last use taken" in notes[revoked_there_info.id]
    assert "revoked there too, as in this file" in notes[revoked_here_info.id]

    after = _tokens_there(pg_url)
    assert after[used_id] == before[used_id]  # its use there is the later one (none here)
    assert after[revoked_there_info.id] == (in_file[revoked_there_info.id][0], before[revoked_there_info.id][1])
    assert after[revoked_here_info.id] == (None, in_file[revoked_here_info.id][1])
    db = PgDatabase.connect(pg_url)
    try:
        there = PostgresTokenStore(db, owns_db=False)
        assert there.verify(revoked_here) is None and there.verify(revoked_there) is None  # no revocation undone
        assert there.verify(used_there).agent == "bob" and there.verify(new).id == new_info.id
    finally:
        db.close()

    third = _run(home, "--json", "migrate", "--to", pg_url)
    assert third.returncode == 0, third.stderr
    assert all(f["already_copied"] for f in json.loads(third.stdout)["files"])


def test_a_token_id_naming_another_token_there_still_refuses_the_file(pg_url: str, tmp_path: Path) -> None:
    home, token = _home(tmp_path)
    assert _run(home, "migrate", "--to", pg_url).returncode == 0
    with closing(sqlite3.connect(home / "auth.db")) as conn, conn:
        token_id = conn.execute("SELECT id FROM api_tokens").fetchone()[0]
        conn.execute("UPDATE api_tokens SET token_hash = ? WHERE id = ?", ("0" * 64, token_id))  # another secret

    again = _run(home, "--json", "migrate", "--to", pg_url)
    # An error, as every command's (docs/cli.md): standard output empty, the one error line on
    # standard error naming the refused file and why; no report of the files that did go.
    assert again.returncode == 1 and again.stdout == ""
    refused = " ".join(again.stderr.split())
    assert refused.startswith("error: copy to ") and "incomplete, 1 of " in refused
    assert "auth.db: " in refused, refused
    assert f"token {token_id} is another token there (another secret)" in refused
    # The hint names what clashed, a token (`engram token create`), not a memory to forget or re-key.
    assert "resolve each (a token: its id names another token there;" in refused
    assert "`engram token create`" in refused and "re-key" not in refused
    db = PgDatabase.connect(pg_url)
    try:
        assert PostgresTokenStore(db).verify(token).id == token_id  # nothing overwritten
    finally:
        db.close()


def _say(settings: object, *contents: str) -> None:
    history = open_history(settings, "alice")  # type: ignore[arg-type]
    try:
        for content in contents:
            history.append("web:1", "user", content)
    finally:
        history.close()


def _conversation(pg_url: str) -> list[tuple[int, str]]:
    db = PgDatabase.connect(pg_url)
    try:
        with db.read() as conn:
            return [tuple(row) for row in conn.execute(
                "SELECT seq, content FROM history_messages WHERE agent = 'alice' AND conversation = 'web:1:' ORDER BY seq")]
    finally:
        db.close()


def test_a_conversation_written_on_both_sides_since_the_copy_is_merged_in_time_order(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    on_sqlite = load_settings(home=home, agent="alice", files={"enabled": False})
    on_postgres = load_settings(home=home / "on-postgres", agent="alice", database_url=pg_url, files={"enabled": False})
    _say(on_sqlite, "hello", "how are you")
    assert _run_single(home, "migrate", "--to", pg_url).returncode == 0
    _say(on_postgres, "asked there")
    _say(on_sqlite, "asked here", "ok")
    _say(on_postgres, "ok", "answered there")  # "ok" on both sides: two messages, not one copied twice
    _say(on_sqlite, "answered here")
    wanted = ["hello", "how are you", "asked there", "asked here", "ok", "ok", "answered there", "answered here"]

    def stop_after_the_merge(table: str, done: int, total: int) -> None:
        if table == "history_messages":
            raise KeyboardInterrupt  # interrupted: the merge is in, the copy not verified nor recorded

    try:
        copy_sqlite_to_postgres(home / "memory.db", pg_url, progress=stop_after_the_merge)
    except KeyboardInterrupt:
        pass
    assert [content for _, content in _conversation(pg_url)] == wanted

    again = _run_single(home, "--json", "migrate", "--to", pg_url)  # resumed: every message found, none added
    assert again.returncode == 0, again.stderr + again.stdout
    report = json.loads(again.stdout)
    assert report["verified"] and report["changed_since"]
    held = _conversation(pg_url)
    assert [content for _, content in held] == wanted and [seq for seq, _ in held] == list(range(1, 9))
    assert report["tables"]["history_messages"]["source"] == report["tables"]["history_messages"]["target"] == 5

    history = open_history(on_postgres, "alice")  # used on: appends go last, undo takes the newest
    try:
        history.append("web:1", "user", "after the merge")
        assert history.pop_newest("web:1").content == "after the merge"
    finally:
        history.close()
    third = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert third.returncode == 0 and json.loads(third.stdout)["already_copied"]
    assert _conversation(pg_url) == held


def test_the_merge_is_named_in_the_report(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    on_sqlite = load_settings(home=home, agent="alice", files={"enabled": False})
    on_postgres = load_settings(home=home / "on-postgres", agent="alice", database_url=pg_url, files={"enabled": False})
    _say(on_sqlite, "hello")
    assert _run_single(home, "migrate", "--to", pg_url).returncode == 0
    _say(on_postgres, "there")
    _say(on_sqlite, "here")
    _say(on_postgres, "there again")

    again = _run_single(home, "--json", "migrate", "--to", pg_url)
    assert again.returncode == 0, again.stderr + again.stdout
    report = json.loads(again.stdout)
    assert report["resolved"] == [f"conversation 'web:1:' of agent 'alice': this file's 1 message not in {report['target']}"
                                  " merged in time order with its 3 (1 of those renumbered after them)"]
    assert [content for _, content in _conversation(pg_url)] == ["hello", "there", "here", "there again"]


def test_an_exchange_held_otherwise_there_refuses_the_file_naming_its_conversation_not_a_memory(
        pg_url: str, tmp_path: Path) -> None:
    """A clash in a conversation's rows is resolved on the conversation (``engram history purge``):
    the refusal's hint says so, and nothing of the file is copied."""
    home = tmp_path / "home"
    _say(load_settings(home=home, agent="alice", files={"enabled": False}), "hello")
    with closing(sqlite3.connect(home / "memory.db")) as conn, conn:
        conn.execute("INSERT INTO history_exchanges (agent, conversation, user_text, assistant_text, created_at,"
                     " fingerprint) VALUES ('alice', 'web:1:', 'hello', 'hi there', 1.8e9, 'f-hello')")
    assert _run_single(home, "migrate", "--to", pg_url).returncode == 0
    with closing(sqlite3.connect(home / "memory.db")) as conn, conn:
        conn.execute("UPDATE history_exchanges SET assistant_text = 'hi, alice' WHERE fingerprint = 'f-hello'")
    _say(load_settings(home=home, agent="alice", files={"enabled": False}), "still here")

    again = _run_single(home, "migrate", "--to", pg_url)
    assert again.returncode != 0
    refused = " ".join(again.stderr.split())
    assert "history_exchanges row ('f-hello',) holds other content there" in refused
    assert "resolve each (a conversation: purge it on one side (`engram history purge KEY`)) and run again" in refused
    assert [content for _, content in _conversation(pg_url)] == ["hello"]  # "still here" not copied
