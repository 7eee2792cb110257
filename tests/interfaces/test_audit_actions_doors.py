"""The audit trail's actions are the engine's (``audit.AUDITED``) at every door: the HTTP API kept
a list of its own without ``recalled``, so ``GET /api/v1/audit?action=recalled`` was refused
although the same answer lists recalled entries, and the CLI's ``--action recalled`` finds them.
An unknown action is refused naming ``action`` and every action allowed, as the CLI refuses it.
HTTP over a real socket, the CLI as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from engram.audit import AUDITED
from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served


def test_http_filters_by_every_audited_action_and_names_them_when_refusing(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "Ada drinks tea", "key": "tea"}).status_code == 201
        assert http.get("/api/v1/memory/search", params={"q": "tea"}).status_code == 200
        recalled = http.get("/api/v1/audit", params={"action": "recalled"})
        assert recalled.status_code == 200, recalled.text
        entries = recalled.json()["entries"]
        assert entries and {e["action"] for e in entries} == {"recalled"}, entries
        assert entries[0]["detail"]["query"] == "tea"
        refused = http.get("/api/v1/audit", params={"action": "bogus"})
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "action" and all(a in refused.json()["allowed"] for a in AUDITED), refused.text
        schema = http.get("/openapi.json").json()["paths"]["/api/v1/audit"]["get"]["parameters"]
        assert next(p for p in schema if p["name"] == "action")["schema"]["enum"] == list(AUDITED)


def test_the_cli_refuses_an_unknown_action_with_the_same_actions(isolated_home: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    refused = subprocess.run([sys.executable, "-m", "engram", "audit", "--action", "bogus"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--action:" in refused.stderr and ", ".join(AUDITED) in refused.stderr, refused.stderr


def test_the_cli_help_names_every_audited_action(isolated_home: Path) -> None:
    """The CLI's --action help is written out (`engram --help` loads no engine module): every action,
    ``moved`` included, is named there."""
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none", "COLUMNS": "400"}
    shown = subprocess.run([sys.executable, "-m", "engram", "audit", "--help"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert all(action in shown.stdout for action in AUDITED) and "moved" in AUDITED, shown.stdout


class _ActionOptions(HTMLParser):
    """The values of the page's audit filter (``<select id="audit-action">``), its "every change" blank left out."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.options, self.text = False, [], ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "select":
            self.inside = ("id", "audit-action") in attrs
        elif tag == "option" and self.inside:
            self.text = ""

    def handle_data(self, data: str) -> None:
        self.text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "option" and self.inside and self.text != "every change":
            self.options.append(self.text)
        elif tag == "select":
            self.inside = False


def test_the_page_offers_every_audited_action(served: Served) -> None:
    # The page kept its own list, without "recalled" and "moved": their entries could not be filtered for.
    with served.client(served.alice) as http:
        page = http.get("/")
    assert page.status_code == 200
    parser = _ActionOptions()
    parser.feed(page.text)
    assert parser.options == list(AUDITED)


def test_an_origin_or_limit_that_names_nothing_is_refused_not_answered_empty(isolated_home: Path) -> None:
    """``--origin ""`` (an unset variable) answered "no entry matches the filters" over a trail
    holding entries, and the library's ``audit_trail(limit="x")`` raised a bare TypeError: both are
    refused naming the field, as ``--action ""`` is; a real origin still filters."""
    with Engram.from_settings(home=isolated_home, embeddings={"provider": "none"}) as mem:
        mem.remember("Ada drinks tea", key="tea")
        assert [e.memory_key for e in mem.audit_trail(origin="library")] == ["tea"]
        for kwargs, field, problem in (({"origin": ""}, "origin", "must not be empty"),
                                       ({"origin": 5}, "origin", "got 5"),
                                       ({"origin": "li\x00brary"}, "origin", "NUL"),
                                       ({"limit": "x"}, "limit", 'got "x" (text)'),
                                       ({"limit": True}, "limit", "got true (a boolean)")):
            with pytest.raises(ValidationError) as err:
                mem.audit_trail(**kwargs)
            assert err.value.field == field and problem in str(err.value), (kwargs, str(err.value))
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    refused = subprocess.run([sys.executable, "-m", "engram", "audit", "--origin", ""], capture_output=True,
                             text=True, env=env, timeout=120)
    assert refused.returncode == 2 and refused.stderr.startswith("error: --origin: must not be empty"), refused.stderr
