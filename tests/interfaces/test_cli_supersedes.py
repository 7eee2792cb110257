"""``engram supersedes REF``: the memories one supersedes, the other way along ``engram supersede``,
as the page and ``GET /api/v1/memory/{ref}/supersedes`` ask it; by id, by key or by ``--key``; never
another agent's. Run in this process (``cli_in_process``) against a real home; bad input through the
real entry point, for its exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import Result

from engram.errors import NotFoundError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner
from tests.unit.test_cli import engram


def _json(home: Path, *args: str) -> dict:
    return json.loads(cli_output(home, "--agent", "alice", "--json", *args))


def _run(home: Path, agent: str, *args: str) -> Result:
    return runner.invoke(app, ["--home", str(home), "--agent", agent, *args], catch_exceptions=False)


def test_supersedes_lists_what_a_memory_replaced_oldest_first_by_id_key_or_key_option(tmp_path: Path) -> None:
    old = _json(tmp_path, "remember", "Alice lives in Porto", "--key", "home-1")["memory"]["id"]
    older = _json(tmp_path, "remember", "Alice lived in Braga", "--key", "home-0")["memory"]["id"]
    new = _json(tmp_path, "remember", "Alice lives in Lisbon", "--key", "home-2")["memory"]["id"]
    assert _json(tmp_path, "supersedes", new)["supersedes"] == []
    for done in (old, older):
        _json(tmp_path, "supersede", done, new)
    # One JSON document, as HTTP's /supersedes: the memory asked of, and each it supersedes whole.
    answer = _json(tmp_path, "supersedes", new)
    assert set(answer) == {"memory", "supersedes"}
    assert answer["memory"] | {"versions": []} == _json(tmp_path, "get", new)  # `get --json` adds its versions
    assert [(m["id"], m["superseded_by"], m["content"]) for m in answer["supersedes"]] == [
        (old, new, "Alice lives in Porto"), (older, new, "Alice lived in Braga")]
    assert _json(tmp_path, "supersedes", "home-2") == answer
    assert _json(tmp_path, "supersedes", "--key", "home-2") == answer
    assert [m["id"] for m in _json(tmp_path, "supersedes", new, "--limit", "1")["supersedes"]] == [old]
    assert _json(tmp_path, "supersedes", old)["supersedes"] == []  # superseded itself, it supersedes none
    # As text: a table of them, oldest first; none is a note on standard error, not a table of headers.
    table = _run(tmp_path, "alice", "supersedes", "home-2")
    assert table.exit_code == 0 and table.stderr == "", table.output
    assert 0 < table.stdout.index("Porto") < table.stdout.index("Braga")
    none = _run(tmp_path, "alice", "supersedes", "home-1")
    assert none.exit_code == 0 and none.stdout == ""
    assert "home-1 supersedes no memory this agent sees" in none.stderr
    # Another agent reaches none of it, by id or by key.
    for ref in (new, "home-2"):
        with pytest.raises(NotFoundError):
            _run(tmp_path, "bob", "supersedes", ref)


@pytest.mark.parametrize(("args", "code", "words"), [
    (("supersedes", "nothing-here"), 3, 'error: memory not found: "nothing-here"'),
    (("supersedes",), 2, "error: supersedes: got no selector (allowed: exactly one of ref, --key)"),
    (("supersedes", "a", "--key", "a"), 2, "error: supersedes: got ref, --key (allowed: exactly one of ref, --key)"),
    (("supersedes", "a", "--limit", "0"), 2, "error: --limit: 0 is out of range (allowed: 1 to 1000)"),
])
def test_supersedes_bad_input_exits_naming_it(isolated_home: Path, args: tuple[str, ...], code: int, words: str) -> None:
    assert engram(isolated_home, "remember", "a memory", "--key", "a").returncode == 0
    done = engram(isolated_home, *args)
    assert done.returncode == code and words in done.stderr, (done.stdout, done.stderr)
    assert done.stdout == ""
