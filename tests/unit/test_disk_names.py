"""Agent and session names as file names: one-to-one, never two names on a case-insensitive file
system, nothing Windows refuses, and read back whether written portably or as they are."""

from __future__ import annotations

import random
import string

import pytest

from engram.disk_names import name_of, portable, settle, windows_refuses
from engram.errors import ValidationError

_FIRST = string.ascii_letters + string.digits
_REST = _FIRST + "._:@-"
_WINDOWS_REFUSES = set('<>:"/\\|?*')


@pytest.mark.parametrize(("name", "written"), [
    ("default", "default"), ("alice", "alice"), ("my-bot_2.x", "my-bot_2.x"), ("ana@40example.com", "ana@40example.com"),
    ("Alice", "!alice"), ("adk:app:U1", "adk+app+!u1"), ("con", "con!"), ("con.x", "con!.x"), ("a.", "a.!"),
    ("con.", "con!.!"), ("COM1", "!c!o!m1"), ("nul", "nul!"),
])
def test_portable_names(name: str, written: str) -> None:
    assert portable(name) == written
    assert name_of(written) == name


def test_no_two_names_meet_on_a_case_insensitive_file_system() -> None:
    rng = random.Random(7)
    names = {rng.choice(_FIRST) + "".join(rng.choice(_REST) for _ in range(rng.randint(0, 5))) for _ in range(50_000)}
    names |= {"Alice", "alice", "ALICE", "aLiCe", "a:b", "con", "CON", "con.", "Con."}
    folded: dict[str, str] = {}
    for name in names:
        written = portable(name)
        assert name_of(written) == name
        assert not (_WINDOWS_REFUSES & set(written)) and not written.endswith((".", " "))
        assert written.split(".")[0].lower() not in {"con", "prn", "aux", "nul", "com1", "lpt1"}
        assert folded.setdefault(written.casefold(), name) == name, f"{name!r} and {folded[written.casefold()]!r} meet"


@pytest.mark.parametrize("text", ["!Claude", "Con!", "a!", "!", "+x", "x!.y", "!!a", "a/b", "", ".hidden", "a b"])
def test_a_folder_that_names_nothing(text: str) -> None:
    assert name_of(text) is None


def test_names_as_they_are_are_read_as_written() -> None:
    # As earlier versions wrote folders, and as a person may make one (ClawCode's agents/<name>/).
    assert name_of("Claude") == "Claude"
    assert name_of("adk:app:u1") == "adk:app:u1"


def test_a_bad_name_is_refused_naming_its_field() -> None:
    with pytest.raises(ValidationError) as caught:
        portable("a/b")
    assert caught.value.field == "agent"
    with pytest.raises(ValidationError) as caught:
        portable("-x", "session")
    assert caught.value.field == "session"
    with pytest.raises(ValidationError, match="at most 255"):
        portable("A" * 128)
    assert len(portable("A" * 127)) == 254


def test_settle_moves_what_an_earlier_version_named_as_is(tmp_path) -> None:
    old = tmp_path / "Claude"
    (old / "x").mkdir(parents=True)
    (old / "x" / "memory.db").write_bytes(b"\x00kept")
    new = settle(old, tmp_path / portable("Claude"))
    assert new == tmp_path / "!claude" and not old.exists()
    assert (new / "x" / "memory.db").read_bytes() == b"\x00kept"


def test_settle_leaves_both_when_the_portable_one_is_there(tmp_path) -> None:
    (tmp_path / "Claude").mkdir()
    (tmp_path / "!claude").mkdir()
    assert settle(tmp_path / "Claude", tmp_path / "!claude") == tmp_path / "!claude"
    assert (tmp_path / "Claude").is_dir()


def test_settle_moves_only_a_name_listed_exactly(tmp_path, monkeypatch) -> None:
    # A case-insensitive file system finds ``claude`` (another agent's) when asked for ``Claude``:
    # pretend so, and nothing may move.
    (tmp_path / "claude").mkdir()
    monkeypatch.setattr("pathlib.Path.exists", lambda self: self.name.lower() == "claude")

    def moved(*args: object) -> None:
        raise AssertionError(f"moved {args}")

    monkeypatch.setattr("engram.disk_names.os.rename", moved)
    assert settle(tmp_path / "Claude", tmp_path / "!claude") == tmp_path / "!claude"
    assert (tmp_path / "claude").is_dir()


@pytest.mark.parametrize(("file_name", "refused"), [
    ("con", True), ("CON.md", True), ("nul.x__abc.md", True), ("a.", True), ("a ", True), ("com1.txt", True),
    ("console.md", False), ("_nul.x__abc.md", False), ("web_abc.md", False), ("con!.md", False),
])
def test_windows_refuses_device_names_whatever_their_case_and_extension(file_name: str, refused: bool) -> None:
    assert windows_refuses(file_name) is refused


def test_left_beside_names_only_a_leftover_that_holds_something(tmp_path) -> None:
    from engram.disk_names import left_beside

    own, typed = tmp_path / "!claude", tmp_path / "Claude"
    typed.mkdir()
    assert not left_beside(typed, own)  # settle moves it: nothing is left beside
    own.mkdir()
    assert not left_beside(typed, own)  # an empty folder: nothing to lose
    (typed / "memory.db").write_bytes(b"x")
    assert left_beside(typed, own)
    assert not left_beside(own, own)
