"""``privacy.pii = "redact"`` on the memory folder's doors (``engram import FOLDER``, ``engram sync``):
nothing engram derives from an entry's text keeps what redaction masks in it.

Each test runs the CLI in this process against a real home folder (SQLite file and memory folder)
and reads every byte engram wrote there."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_in_process import cli_output

REDACT = {"ENGRAM_PRIVACY__PII": "redact"}
EMAIL = "ops@example.com"
# An entry written by hand (or edited) with the id engram gave it, but no key in its marker.
HAND_WRITTEN = f"# Notes\n\n- the admin is {EMAIL} <!-- id:01a22a38-fb50-72d9-af25-5c44fd794f6d -->\n"


def _holding(home: Path, *skip: Path) -> list[str]:
    """Every file under ``home`` (the database and its write-ahead log, the memory folder) holding
    a part of the address, but those in ``skip``."""
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")
                  if p.is_file() and p not in skip and b"example" in p.read_bytes())


def test_an_imported_entry_without_a_key_is_keyed_from_its_text_as_stored(tmp_path: Path) -> None:
    folder = tmp_path / "folder" / "agents" / "default"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text(HAND_WRITTEN, encoding="utf-8")
    home = tmp_path / "home"
    out = cli_output(home, "import", str(tmp_path / "folder"), env=REDACT)
    assert "imported 1 with their ids" in out
    [memory] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    assert (memory["key"], memory["content"]) == ("admin-redacted-email", "the admin is [REDACTED:email]")
    assert _holding(home) == []  # the key column, the audit trail, the folder's marker


SETTLED = ("files -> database: 0 created, 0 updated, 0 forgotten, 0 moved\n"
           "database -> files: 0 added, 0 updated, 0 removed in 0 file(s)")


def test_an_entry_edited_by_hand_is_rewritten_as_stored_and_the_next_syncs_find_nothing(tmp_path: Path) -> None:
    # A person types an address into an entry engram wrote: the database stores it masked, and so
    # does the folder, in the same pass. Left as typed, the mirror kept the address and every later
    # sync took the file's text for a new edit ("1 updated", a version of the memory each time).
    home = tmp_path / "home"
    cli_output(home, "remember", "--key", "admin", "the admin is bob", env=REDACT)
    cli_output(home, "sync", env=REDACT)
    [notes] = (home / "memory" / "agents" / "default").glob("*.md")
    notes.write_text(notes.read_text("utf-8").replace("bob", EMAIL), encoding="utf-8")
    out = cli_output(home, "sync", env=REDACT)
    assert "0 created, 1 updated" in out and "0 added, 1 updated, 0 removed in 1 file(s)" in out
    [memory] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    assert (memory["key"], memory["content"]) == ("admin", "the admin is [REDACTED:email]")
    assert "- the admin is [REDACTED:email] (" in notes.read_text("utf-8")
    assert _holding(home) == []
    assert SETTLED in cli_output(home, "sync", env=REDACT)
    assert SETTLED in cli_output(home, "sync", env=REDACT)
    [after] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    assert after["updated_at"] == memory["updated_at"]  # not stored again by either


def test_a_hand_written_entry_is_keyed_and_rewritten_as_stored_and_the_next_syncs_find_nothing(tmp_path: Path) -> None:
    # An entry with an id the database has never seen (written by hand, or a copied folder) is
    # imported with its id: its file shows it as stored, with the key it was given.
    home = tmp_path / "home"
    cli_output(home, "stats", env=REDACT)
    notes = home / "memory" / "agents" / "default" / "notes.md"
    notes.parent.mkdir(parents=True, exist_ok=True)
    notes.write_text(HAND_WRITTEN, encoding="utf-8")
    assert "0 added, 1 updated, 0 removed in 1 file(s)" in cli_output(home, "sync", env=REDACT)
    # Keyed from its text as stored (from the text as written, the key column held the address).
    [memory] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    assert (memory["key"], memory["content"]) == ("admin-redacted-email", "the admin is [REDACTED:email]")
    assert "- the admin is [REDACTED:email] (" in notes.read_text("utf-8")
    assert "key:admin-redacted-email" in notes.read_text("utf-8")
    assert _holding(home) == []
    assert SETTLED in cli_output(home, "sync", env=REDACT)
    assert SETTLED in cli_output(home, "sync", env=REDACT)


def test_two_global_versions_without_a_key_are_named_by_their_key_as_stored(monkeypatch, tmp_path: Path) -> None:
    # Two hand-written global entries whose text makes one key: settled as two versions of one
    # memory (shared_keys), the conflict note and the report naming that key as stored.
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    home = tmp_path / "home"
    cli_output(home, "--agent", "alice", "stats", env=REDACT)
    policy = home / "memory" / "global" / "policy.md"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text(
        "# Policy\n\n"
        f"- admin contact is {EMAIL} for team alpha today <!-- id:01a22a38-fb50-72d9-af25-5c44fd794f6d created:1796004000 -->\n"
        f"- admin contact is {EMAIL} for team alpha tomorrow <!-- id:01a22a38-fb50-72d9-af25-5c44fd794f6e"
        " created:1796004001 -->\n", encoding="utf-8")
    out = cli_output(home, "--agent", "alice", "sync", env=REDACT)
    assert "key admin-contact-redacted-email-team-alpha is held by two global memories" in out and "example" not in out
    [memory] = json.loads(cli_output(home, "--agent", "alice", "--json", "list", "--scope", "global", env=REDACT))
    assert (memory["key"], memory["content"]) == ("admin-contact-redacted-email-team-alpha",
                                                  "admin contact is [REDACTED:email] for team alpha today")
    [conflict] = policy.parent.glob("*.conflict")
    note, version = conflict.read_text("utf-8").split("\n", 1)
    assert "key admin-contact-redacted-email-team-alpha," in note and "example" not in note
    assert "for team alpha tomorrow" in version  # the file's version, as its writer wrote it
    assert _holding(home, policy, conflict) == []
