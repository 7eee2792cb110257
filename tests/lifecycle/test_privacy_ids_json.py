"""``privacy.pii`` and the parts of a conversation that are not prose: tool call ids (identifiers,
kept as given so a result always pairs with its call) and JSON (a tool's result, a tool call's
arguments, metadata), which stays the same JSON with only its findings masked. Each test runs the
real engine on a real SQLite file; where the point is what reaches the file, its bytes are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.engine import Engram
from engram.errors import ValidationError
from engram.model import Message, Role
from engram.privacy import PiiPolicy
from tests.lifecycle.test_privacy_history import raw_bytes

# Luhn-valid runs, as a provider's random id may hold: each alone reads as a card number.
CALL_A, CALL_B = "call_4111111111111111", "call_5555555555554444"


def opened(home: Path, pii: str) -> Engram:
    return Engram.from_settings(home=home, path=home / "memory.db", privacy={"pii": pii})


def pairs(engram: Engram, key: str) -> list[tuple[str, ...]]:
    """Each message as (role, its call ids..., or the id it answers)."""
    return [(m.role.value, *(c.id for c in m.tool_calls), *((m.tool_call_id,) if m.tool_call_id else ()))
            for m in engram.history.all(key)]


# --- tool call ids ------------------------------------------------------------------------------

def test_two_card_like_call_ids_stay_two_and_each_result_pairs_with_its_call(tmp_path: Path) -> None:
    with opened(tmp_path, "redact") as engram:
        history = engram.history
        history.append("web:1", "user", "pay both")
        history.append("web:1", "assistant", "", tool_calls=[{"id": CALL_A, "name": "pay", "arguments": "{}"},
                                                             {"id": CALL_B, "name": "pay", "arguments": "{}"}])
        history.append_many("web:1", [{"role": "tool", "content": "paid a", "tool_call_id": CALL_A},
                                      {"role": "tool", "content": "paid b", "tool_call_id": CALL_B}])
        # The same ids in another message of the conversation do not merge with these either.
        history.append("web:1", "assistant", "", tool_calls=[{"id": "call_4111111111111112", "name": "pay"}])
        history.append("web:1", "tool", "paid c", tool_call_id="call_4111111111111112")
        assert pairs(engram, "web:1") == [("user",), ("assistant", CALL_A, CALL_B), ("tool", CALL_A), ("tool", CALL_B),
                                          ("assistant", "call_4111111111111112"), ("tool", "call_4111111111111112")]
        # Only the id is an identifier: the card number in a result's text is still masked.
        history.append("web:1", "assistant", "", tool_calls=[{"id": "c9", "name": "card"}])
        history.append("web:1", "tool", "card 4111 1111 1111 1111", tool_call_id="c9")
        assert history.all("web:1")[-1].content == "card [REDACTED:card]"
    assert b"4111 1111" not in raw_bytes(tmp_path / "memory.db")


@pytest.mark.parametrize(("before", "after"), [("warn", "redact"), ("off", "redact"), ("redact", "warn")])
def test_a_result_pairs_with_a_call_stored_under_another_setting(tmp_path: Path, before: str, after: str) -> None:
    call = "call_ops@example.com"  # an id holding what a detector finds, stored as given under each setting
    with opened(tmp_path, before) as engram:
        engram.history.append("web:1", "user", "hi")
        engram.history.append("web:1", "assistant", "", tool_calls=[{"id": call, "name": "mail", "arguments": "{}"}])
    with opened(tmp_path, after) as engram:
        engram.history.append("web:1", "tool", "sent to ops@example.com", tool_call_id=call)
        assert pairs(engram, "web:1") == [("user",), ("assistant", call), ("tool", call)]
        masked = "sent to [REDACTED:email]" if after == "redact" else "sent to ops@example.com"
        assert engram.history.all("web:1")[-1].content == masked


# --- JSON ---------------------------------------------------------------------------------------

def test_a_tool_result_that_is_json_stays_that_json_once_redacted(tmp_path: Path) -> None:
    inner = json.dumps({"card": 4111111111111111})  # a result some tools encode twice
    result = {"card": 4111111111111111, "note": 'set password: hunter2hunter2" done', "to": "ops@example.com",
              "ok": True, "n": 1e300, "inner": inner,
              "score": 0.4111111111111111}  # a fraction's digits (a card number's, read as text) are no card
    written = json.dumps(result).replace("ops@example.com", "ops\\u0040example.com")  # an escaped @ is one too
    with opened(tmp_path, "redact") as engram:
        engram.history.append("web:1", "assistant", "", tool_calls=[{"id": "c1", "name": "lookup", "arguments": "{}"}])
        engram.history.append("web:1", "tool", written, tool_call_id="c1")
        stored = engram.history.all("web:1")[-1].content
    assert json.loads(stored) == {"card": "[REDACTED:card]", "note": 'set [REDACTED:api_key]" done',
                                  "to": "[REDACTED:email]", "ok": True, "n": 1e300,
                                  "inner": json.dumps({"card": "[REDACTED:card]"}), "score": 0.4111111111111111}
    data = raw_bytes(tmp_path / "memory.db")
    assert b"hunter2" not in data and b"example.com" not in data
    assert stored.count("4111111111111111") == 1  # the score's digits alone


def test_a_card_number_given_as_a_json_number_is_screened_in_arguments_and_metadata(tmp_path: Path) -> None:
    arguments = '{"card": 4111111111111111, "amount": 12.5, "order": 1234567890123}'
    with opened(tmp_path, "warn") as engram:
        done = engram.history.append_reported("web:1", "assistant", "", tool_calls=[
            {"id": "c1", "name": "pay", "arguments": arguments}], metadata={"card": 4111111111111111})
        assert done.warnings == ("possible PII stored: card number (1); set privacy.pii = \"redact\" to mask it",
                                 "in metadata: possible PII stored: card number (1); set privacy.pii = \"redact\" to "
                                 "mask it")
        assert done.messages[0].tool_calls[0].arguments == arguments  # warn stores as given
    with opened(tmp_path, "redact") as engram:
        engram.history.append("web:2", "assistant", "", tool_calls=[{"id": "c1", "name": "pay", "arguments": arguments}],
                              metadata={"card": 4111111111111111, "count": 3, "flag": True})
        memory = engram.remember("paid", metadata={"card": 4111111111111111, "order": 1234567890123}).memory
        stored = engram.history.all("web:2")[0]
    assert stored.tool_calls[0].arguments == '{"card": "[REDACTED:card]", "amount": 12.5, "order": 1234567890123}'
    assert stored.metadata == {"card": "[REDACTED:card]", "count": 3, "flag": True}
    assert memory.metadata == {"card": "[REDACTED:card]", "order": 1234567890123}


def test_a_signed_or_scaled_json_number_is_no_card_number(tmp_path: Path) -> None:
    # The rule docs/privacy.md states: a card number is written as its digits, so only an unsigned
    # integer is read as one; a negative number or one with an exponent is a quantity, kept as given,
    # as such digits are in text after a minus sign.
    arguments = '{"delta": -4111111111111111, "scale": 4111111111111111e0, "card": 4111111111111111}'
    with opened(tmp_path, "redact") as engram:
        engram.history.append("web:1", "assistant", "", tool_calls=[{"id": "c1", "name": "pay", "arguments": arguments}])
        memory = engram.remember(arguments).memory
        stored = engram.history.all("web:1")[0].tool_calls[0].arguments
    kept = '{"delta": -4111111111111111, "scale": 4111111111111111e0, "card": "[REDACTED:card]"}'
    assert (stored, memory.content) == (kept, kept)


def test_in_prose_a_card_number_followed_by_letters_is_redacted(tmp_path: Path) -> None:
    # The other half of that rule (docs/privacy.md): outside JSON, letters after the digits are no
    # exponent but a word a card number was typed against, and the digits are masked.
    with opened(tmp_path, "redact") as engram:
        memory = engram.remember("card 4111111111111111e0 and 4111111111111111exp 12/26").memory
    assert memory.content == "card [REDACTED:card]e0 and [REDACTED:card]exp 12/26"
    assert b"4111111111111111" not in raw_bytes(tmp_path / "memory.db")


def test_json_held_as_text_in_metadata_or_a_memory_stays_json(tmp_path: Path) -> None:
    raw = json.dumps({"log": 'password: hunter2hunter2" ok', "card": 4111111111111111})
    with opened(tmp_path, "redact") as engram:
        memory = engram.remember(raw, metadata={"raw": raw}).memory
        again = engram.get(memory.id)
    expected = {"log": '[REDACTED:api_key]" ok', "card": "[REDACTED:card]"}
    assert again is not None
    assert json.loads(again.content) == expected and json.loads(again.metadata["raw"]) == expected
    assert b"hunter2" not in raw_bytes(tmp_path / "memory.db")


def test_json_names_redaction_would_make_one_are_refused_in_content_naming_the_field(tmp_path: Path) -> None:
    two = json.dumps({"ops@example.com": 1, "dev@example.com": 2})
    with opened(tmp_path, "redact") as engram:
        engram.history.append("web:1", "user", "kept")
        with pytest.raises(ValidationError) as refused:
            engram.remember(two)
        assert refused.value.field == "content"
        with pytest.raises(ValidationError) as refused:
            engram.remember_many([{"content": "fine"}, {"content": "x", "search_context": two}])
        assert refused.value.field == "items[1].search_context"
        with pytest.raises(ValidationError) as refused:
            engram.history.set_summary("web:1", two)
        assert refused.value.field == "summary"
        with pytest.raises(ValidationError) as refused:
            engram.remember("note", metadata={"raw": two})
        assert refused.value.field == "metadata.raw"
        assert engram.count() == 0 and [m.content for m in engram.history.all("web:1")] == ["kept"]
        assert engram.history.summary("web:1") in ("", None)


def test_a_snapshot_import_keeps_json_content_json_and_names_the_entry_it_refuses(tmp_path: Path) -> None:
    raw = json.dumps({"card": 4111111111111111, "to": "ops@example.com"})
    two = json.dumps({"ops@example.com": 1, "dev@example.com": 2})
    with opened(tmp_path, "redact") as engram:
        with pytest.raises(ValidationError) as refused:  # (a SnapshotError)
            engram.import_snapshot(json.dumps({"memories": [{"id": "m1", "content": raw}, {"id": "m2", "content": two}]}))
        assert refused.value.field == "memories[1].content"
        assert engram.count() == 0
        done = engram.import_snapshot(json.dumps({"memories": [{"id": "m1", "content": raw}]}))
        assert done.imported == 1
        (memory,) = engram.list()
        assert json.loads(memory.content) == {"card": "[REDACTED:card]", "to": "[REDACTED:email]"}
        exported = engram.export_snapshot()
    other = tmp_path / "other"
    with opened(other, "redact") as second:  # stored redacted, it comes back byte for byte with nothing to report
        assert second.import_snapshot(exported).warnings == ()
        assert [m.content for m in second.list()] == [memory.content]


def test_text_nested_past_the_parser_s_limit_is_screened_as_text(tmp_path: Path) -> None:
    deep = "[" * 100_000 + " ops@example.com"  # no JSON: Python's parser gives up with RecursionError
    with opened(tmp_path, "redact") as engram:
        engram.history.append("web:1", "assistant", deep, tool_calls=[{"id": "c1", "name": "f", "arguments": deep}])
        (stored,) = engram.history.all("web:1")
    assert stored.content == stored.tool_calls[0].arguments == "[" * 100_000 + " [REDACTED:email]"


def test_a_metadata_name_given_as_a_number_is_screened_as_its_digits(tmp_path: Path) -> None:
    """Review: names were screened only when text, so ``{4111111111111111: ...}`` from Python passed
    ``screen_metadata`` as it was. ``append`` and ``remember`` read metadata as JSON first (the name
    becomes text, then screened), but ``History.add`` takes a ``Message`` as built, and the store wrote
    the name into the file as ``"4111111111111111"`` (JSON names are text)."""
    card = 4111111111111111
    with opened(tmp_path, "redact") as engram:
        engram.history.add("web:1", Message(Role.USER, "hello", metadata={card: "x", "n": {card: 1, 7: 2}}))
        assert engram.history.all("web:1")[0].metadata == {"[REDACTED:card]": "x", "n": {"[REDACTED:card]": 1, "7": 2}}
        with pytest.raises(ValidationError) as refused:  # two names made one: refused, as for names given as text
            engram.history.add("web:1", Message(Role.USER, "again", metadata={card: "x", "[REDACTED:card]": "y"}))
        assert refused.value.field == "metadata"
        assert len(engram.history.all("web:1")) == 1
    assert str(card).encode() not in raw_bytes(tmp_path / "memory.db")
    # The policy itself, for any caller: a number name that is no finding stays a number.
    assert PiiPolicy("redact").screen_metadata({card: 1, 7: 2}) == (
        {"[REDACTED:card]": 1, 7: 2}, ["in metadata: redacted possible PII before storing: card number (1)"])


def test_a_json_string_holding_an_escaped_lone_surrogate_is_stored_once_redacted(tmp_path: Path) -> None:
    """``"\\ud800"`` is valid JSON (ASCII text). The string around a finding was written again with
    the surrogate as itself, which no UTF-8 holds: under redact the content was refused as holding a
    lone surrogate it did not hold (warn stored it). It stays an escape; the other text as itself."""
    given = '{"note": "\\ud800 é mail a@b.io", "tool": "x"}'
    with opened(tmp_path, "redact") as engram:
        stored = engram.remember(given, key="odd").memory
        engram.history.append("web:1", "user", "note it", metadata={"raw": given})
        assert stored.content == '{"note": "\\ud800 é mail [REDACTED:email]", "tool": "x"}'
        assert json.loads(stored.content) == {"note": "\ud800 é mail [REDACTED:email]", "tool": "x"}
        (message,) = engram.history.all("web:1")
        assert message.metadata["raw"] == stored.content
