"""``privacy.pii = "redact"`` on the memory folder's doors (``engram import FOLDER``, ``engram sync``):
nothing engram derives from an entry's text keeps what redaction masks in it.

Each test runs the CLI in this process against a real home folder (SQLite file and memory folder)
and reads every byte engram wrote there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner

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
    # The file's version, as the database would store it (taking it stores that text).
    assert "admin contact is [REDACTED:email] for team alpha tomorrow" in version
    assert _holding(home) == []


CARD = "4111 1111 1111 1111"


def _edited_on_both_sides(home: Path, text: str, sub_bullet: str = "") -> Path:
    """A memory synced to its file, then changed in the database (with the folder left as it
    was) and, to ``text`` (and with ``sub_bullet`` under it, when given), in its file: the next
    sync keeps the file's version as a ``both-changed`` conflict. Returns the memory's file."""
    cli_output(home, "remember", "--key", "billing", "billing goes to bob", env=REDACT)
    cli_output(home, "sync", env=REDACT)
    cli_output(home, "remember", "--key", "billing", "billing goes to carol", env={**REDACT, "ENGRAM_FILES__ENABLED": "false"})
    [notes] = (p for p in (home / "memory" / "agents" / "default").iterdir() if p.suffix in (".md", ".yaml"))
    lines = notes.read_text("utf-8").replace("billing goes to bob", text).splitlines()
    if sub_bullet:
        at = next(i for i, line in enumerate(lines) if text in line)
        lines.insert(at + 1, f"  - {sub_bullet}")
    notes.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return notes


@pytest.mark.parametrize("fmt", ["markdown", "yaml"])
def test_a_conflict_keeps_the_file_version_as_engram_would_store_it(monkeypatch, tmp_path: Path, fmt: str) -> None:
    # The file's version of a memory changed on both sides is taken out of its file and kept in a
    # .conflict file engram writes into the folder: under redact it holds what the person asked
    # engram never to keep no more than the database and the memory file do.
    monkeypatch.setenv("ENGRAM_FILES__FORMAT", fmt)
    home = tmp_path / "home"
    notes = _edited_on_both_sides(home, f"billing goes to {EMAIL}, card {CARD}")
    out = cli_output(home, "sync", env=REDACT)
    assert "conflict" in out
    [conflict] = notes.parent.glob("*.conflict")
    kept = conflict.read_text("utf-8")
    assert "billing goes to [REDACTED:email], card [REDACTED:card]" in kept
    assert _holding(home) == [] and "1111" not in kept
    # Taking the file side stores that text, as storing the edit would have.
    [memory] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    cli_output(home, "conflicts", "resolve", memory["id"], "--take", "file", env=REDACT)
    [resolved] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    assert resolved["content"] == "billing goes to [REDACTED:email], card [REDACTED:card]"


def test_a_copy_kept_as_a_repeated_id_conflict_is_kept_as_engram_would_store_it(tmp_path: Path) -> None:
    # A bullet copied with its marker and edited (an address typed into the copy) leaves its file
    # as a repeated-id conflict: kept redacted too, while the entry that stays is untouched.
    home = tmp_path / "home"
    cli_output(home, "remember", "--key", "billing", "billing goes to bob", env=REDACT)
    cli_output(home, "sync", env=REDACT)
    [notes] = (home / "memory" / "agents" / "default").glob("*.md")
    [bullet] = [line for line in notes.read_text("utf-8").splitlines() if "billing goes to bob" in line]
    notes.write_text(notes.read_text("utf-8") + bullet.replace("bob", EMAIL) + "\n", encoding="utf-8")
    assert "conflict" in cli_output(home, "sync", env=REDACT)
    [conflict] = notes.parent.glob("*.conflict")
    assert "kind=repeated-id" in conflict.read_text("utf-8")
    assert "- billing goes to [REDACTED:email] (" in conflict.read_text("utf-8")
    assert "- billing goes to bob (" in notes.read_text("utf-8")
    assert _holding(home) == []


def test_under_warn_a_conflict_keeps_the_file_version_as_written(tmp_path: Path) -> None:
    # warn stores what was written (and says so): the conflict keeps it as written, its source
    # text and all, so taking the file side stores what the person wrote.
    home = tmp_path / "home"
    notes = _edited_on_both_sides(home, f"billing goes to {EMAIL}")
    warn = {"ENGRAM_PRIVACY__PII": "warn"}
    cli_output(home, "sync", env=warn)
    [conflict] = notes.parent.glob("*.conflict")
    assert f"- billing goes to {EMAIL} (" in conflict.read_text("utf-8")


def test_a_conflict_whose_metadata_names_redaction_makes_one_is_kept_with_both_told_apart(tmp_path: Path) -> None:
    # Storing that version would be refused (two metadata names become one marker), yet it is
    # taken out of its file all the same: kept with the names told apart by a count, so nothing
    # but the addresses is lost from what the person wrote, and none of them is on disk.
    home = tmp_path / "home"
    notes = _edited_on_both_sides(home, "billing goes to dave", f'metadata: {{"{EMAIL}": "days", "bob@example.com":'
                                                                 f' {{"card": {CARD.replace(" ", "")}}}}}')
    assert "conflict" in cli_output(home, "sync", env=REDACT)
    [conflict] = notes.parent.glob("*.conflict")
    kept = conflict.read_text("utf-8")
    assert '- metadata: {"[REDACTED:email]": "days", "[REDACTED:email] (2)": {"card": "[REDACTED:card]"}}' in kept
    assert _holding(home) == [] and "1111" not in kept


def test_a_conflict_version_past_the_limit_once_redacted_is_never_taken_for_a_deletion(monkeypatch, tmp_path: Path) -> None:
    # The file's version fits max_content_chars as typed but not once redacted (a marker is longer
    # than a short address): the .conflict file holds it redacted, which no entry may be, so
    # ``--take file`` is refused naming the conflict, where it forgot the memory ("as the file had").
    monkeypatch.setenv("ENGRAM_MAX_CONTENT_CHARS", "40")
    home = tmp_path / "home"
    notes = _edited_on_both_sides(home, "billing goes to a@b.io ok then fine")
    cli_output(home, "sync", env=REDACT)
    [conflict] = notes.parent.glob("*.conflict")
    assert "- billing goes to [REDACTED:email] ok then fine (" in conflict.read_text("utf-8")
    [memory] = json.loads(cli_output(home, "--json", "list", env=REDACT))
    refused = runner.invoke(app, ["--home", str(home), "conflicts", "resolve", memory["id"], "--take", "file"], env=REDACT)
    assert isinstance(refused.exception, ValidationError) and refused.exception.field == "conflict"
    assert "holds no file version engram can read" in str(refused.exception)
    assert [m["content"] for m in json.loads(cli_output(home, "--json", "list", env=REDACT))] == ["billing goes to carol"]
    assert conflict.exists()
    cli_output(home, "conflicts", "resolve", memory["id"], "--take", "merge", "--content", "billing goes to dave", env=REDACT)
    assert [m["content"] for m in json.loads(cli_output(home, "--json", "list", env=REDACT))] == ["billing goes to dave"]
