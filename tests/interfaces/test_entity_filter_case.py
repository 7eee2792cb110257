"""``--entity`` finds a memory whatever case its related entity was typed in, at the CLI as in the
engine (the store contract pins each backend: ``test_related_entity_filter_ignores_case``).

Review: ``engram list --entity alice`` missed a memory stored with ``--entity Alice``; the PHP
entity's ``getRelatedTo('Hendrik')``, on MySQL's default collation, found it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_in_process import cli_output

FULL_TEXT = {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}  # the filter is under test, not the model


def test_cli_list_and_recall_by_entity_ignore_its_case_and_show_it_as_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alice = ("--agent", "alice", "--json")
    cli_output(home, *alice, "remember", "tea with Alice on Friday", "--key", "tea-alice", "--entity", "Alice", env=FULL_TEXT)
    cli_output(home, *alice, "remember", "tea with Bob on Monday", "--key", "tea-bob", "--entity", "Bob", env=FULL_TEXT)

    listed = json.loads(cli_output(home, *alice, "list", "--entity", "alice", env=FULL_TEXT))
    assert [(m["key"], m["related_entity"]) for m in listed] == [("tea-alice", "Alice")]
    hits = json.loads(cli_output(home, *alice, "recall", "tea", "--entity", "ALICE", env=FULL_TEXT))["hits"]
    assert [h["memory"]["key"] for h in hits] == ["tea-alice"]
