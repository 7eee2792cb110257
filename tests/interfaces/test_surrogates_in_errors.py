"""A lone surrogate (``"\\ud800"`` in a JSON body, undecodable bytes on a command line) in a value
an error message shows is spelled as JSON escapes it, so the error can be sent: the message held it
raw (``jsondoc.shown``), and the HTTP API answered a refused ``type``, ``valid_from`` or ``where``
operator with 500 "UnicodeEncodeError" instead of a 422 naming the field; printing the library's
error raised too. Over a real socket; nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served

LONE = "\\ud800"  # as a JSON body spells it


@pytest.mark.parametrize(("body", "field", "shown"), [
    ('{"content": "c", "type": "' + LONE + '"}', "type", '"\\ud800" is not a type word'),
    ('{"content": "c", "valid_from": "x' + LONE + '"}', "valid_from", 'cannot read "x\\ud800"'),
    ('{"content": "c", "' + LONE + '": 1}', "\\ud800", "unknown field"),
])
def test_a_refused_body_value_holding_a_lone_surrogate_is_a_422_naming_the_field(served: Served, body: str, field: str,
                                                                               shown: str) -> None:
    with served.client(served.alice) as c:
        r = c.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 422, r.text
        assert r.json()["field"] == field and shown in r.json()["detail"], r.json()
        assert c.get("/api/v1/stats").json()["memories"] == 0


def test_a_where_operator_holding_a_lone_surrogate_is_a_422_naming_its_place(served: Served) -> None:
    with served.client(served.alice) as c:
        r = c.get("/api/v1/memory", params={"where": '{"a": {"' + LONE + '": 1}}'})
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "where.a" and 'unknown operator "\\ud800"' in r.json()["detail"], r.json()


def test_the_librarys_error_for_one_can_be_printed(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path / "home", files={"enabled": False}) as engram:
        for call in (lambda: engram.remember("c", type="\ud800"), lambda: engram.remember("c", valid_from="\ud800"),
                     lambda: engram.for_agent("a\udcff")):
            with pytest.raises(ValidationError) as refused:
                call()
            assert "\\ud" in str(refused.value) and str(refused.value).encode("utf-8"), refused.value
        assert engram.count() == 0
