"""engram.integrations.agent_for_ids: an application's ids to one engram agent each, whatever they
hold (no framework needed)."""

from __future__ import annotations

import pytest

from engram.errors import ValidationError
from engram.integrations import agent_for_ids
from engram.model import make_scope


def test_different_ids_never_share_an_agent_and_every_name_is_valid() -> None:
    long = "x" * 150
    tricky = [("alice",), ("Alice",), ("José",), ("Jos@c3@a9",), ("Jos-fe201568",), ("ana@example.com",),
              ("a:b",), ("a@3ab",), ("lone \udc80 surrogate",), ("张伟",), ("😀",), (long,), (long + "y",),
              ("a", "b:c"), ("a:b", "c"), (long, "a\0b"), (long, "a"), ("a", "b")]
    names = [agent_for_ids("p:", **{f"id{i}": part for i, part in enumerate(ids)}) for ids in tricky]
    assert len(set(names)) == len(tricky)
    assert all(make_scope(name, None).agent == name and len(name) <= 128 for name in names)
    assert names[:3] == ["p:alice", "p:Alice", "p:Jos@c3@a9"]  # plain ids read as themselves


@pytest.mark.parametrize(("prefix", "ids", "field"), [
    ("p:", {"user_id": ""}, "user_id"),
    ("p:", {"user_id": "  "}, "user_id"),
    ("p:", {"app_name": "shop", "user_id": None}, "user_id"),
    ("", {"app_name": "-shop", "user_id": "ana"}, "app_name"),  # a name must start with a letter or digit
])
def test_an_id_that_cannot_name_an_agent_is_named(prefix: str, ids: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        agent_for_ids(prefix, **ids)
    assert err.value.field == field


def test_no_ids_is_refused_not_the_prefix_alone_as_every_callers_agent() -> None:
    # agent_for_ids("adk:") answered "adk:": every caller without ids shared one agent's memories.
    with pytest.raises(ValidationError) as err:
        agent_for_ids("adk:")
    assert err.value.field == "ids" and "user_id=" in str(err.value.allowed)


@pytest.mark.parametrize(("args", "kwargs", "words"), [
    ((), {"user_id": "ana"}, "is required"),  # was Python's TypeError: missing 1 required positional argument
    ((None,), {"user_id": "ana"}, "got NoneType"),  # was TypeError: unsupported operand type(s) for +
])
def test_a_missing_or_wrong_prefix_is_refused_naming_it_and_what_it_takes(args: tuple, kwargs: dict, words: str) -> None:
    with pytest.raises(ValidationError) as err:
        agent_for_ids(*args, **kwargs)
    assert err.value.field == "prefix" and words in err.value.problem
    assert '"crewai:"' in str(err.value.allowed)
