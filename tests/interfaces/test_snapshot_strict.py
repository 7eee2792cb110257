"""engram's own snapshot is read as strictly at every door: ``engram import FILE`` kept the last of
a field named twice in one object (dropping the first without a word) while HTTP's ``/import``
refused the body, and now refuses it in the same words, importing nothing. PtrClaw's files, which
engram does not write, keep the lenient reading. A field of an entry this engram does not know (a
newer engram's) is imported without it, with a warning naming the field and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_in_process import cli_output
from tests.interfaces.conftest import serving
from tests.unit.test_cli import engram

REPEATED = '{"format": "engram-snapshot", "version": 1, "memories": [{"content": "first", "content": "second"}]}'
SAID = 'the name "content" is given twice in one object'


def _env(home: Path) -> dict[str, str]:
    return {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}


def test_cli_import_refuses_a_snapshot_naming_a_field_twice_as_http_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "snapshot.json"
    source.write_text(REPEATED, encoding="utf-8")
    home = tmp_path / "home"
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    refused = engram(home, "--agent", "alice", "import", str(source))
    assert refused.returncode != 0 and SAID in refused.stderr, (refused.stdout, refused.stderr)
    assert cli_output(home, "--agent", "alice", "--json", "list", env=_env(home)).strip() == "[]"

    with serving(tmp_path / "served", embeddings={"provider": "none"}) as served, served.client(served.alice) as http:
        answer = http.post("/api/v1/import", content=REPEATED.encode(), headers={"Content-Type": "application/json"})
        assert answer.status_code == 400 and SAID in answer.json()["detail"], answer.text


def test_a_ptrclaw_file_keeps_the_lenient_reading(tmp_path: Path) -> None:
    source = tmp_path / "memory.json"
    source.write_text('[{"key": "k", "content": "first", "content": "second"}]', encoding="utf-8")
    home = tmp_path / "home"
    cli_output(home, "--agent", "alice", "import", str(source), env=_env(home))
    assert '"second"' in cli_output(home, "--agent", "alice", "--json", "list", env=_env(home))


def test_an_unknown_entry_field_is_left_out_with_a_warning_naming_it_and_its_entry(tmp_path: Path) -> None:
    source = tmp_path / "snapshot.json"
    source.write_text('{"format": "engram-snapshot", "version": 1, "memories": ['
                      '{"content": "kept one"}, {"content": "kept two", "bogus": 1}]}', encoding="utf-8")
    home = tmp_path / "home"
    said = cli_output(home, "--agent", "alice", "import", str(source), env=_env(home))
    assert "memories[1].bogus: not a field of a memory in this engram version, left out" in said, said
    listed = cli_output(home, "--agent", "alice", "--json", "list", env=_env(home))
    assert "kept one" in listed and "kept two" in listed and "bogus" not in listed


def test_a_repeat_before_other_malformed_json_is_still_malformed_json(tmp_path: Path) -> None:
    # The strict reading stops at the repeat; the lenient one then finds the text after the document.
    from engram.engine import Engram
    from engram.errors import SnapshotError

    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_snapshot('[{"content": "a", "content": "b"}] trailing')
        assert "malformed JSON: Extra data" in str(refused.value)
        assert mem.count() == 0


def test_an_unknown_top_level_field_is_left_out_with_a_warning_naming_it(tmp_path: Path) -> None:
    """A newer engram's snapshot may carry fields beside its memories that this one does not read:
    the memories import, and each such field is named as an entry's unknown field is."""
    source = tmp_path / "snapshot.json"
    source.write_text('{"format": "engram-snapshot", "version": 1, "exported_at": 1767225600, "agents": ["alice"], '
                      '"memories": [{"content": "kept one"}], "checksum": "abc"}', encoding="utf-8")
    home = tmp_path / "home"
    said = cli_output(home, "--agent", "alice", "import", str(source), env=_env(home))
    for name in ("agents", "checksum"):
        assert (f"{name}: not a field of an engram snapshot in this engram version, left out "
                "(allowed: exported_at, format, memories, version)") in said, said
    assert "exported_at: not a field" not in said and "memories: not a field" not in said, said
    assert "kept one" in cli_output(home, "--agent", "alice", "--json", "list", env=_env(home))
