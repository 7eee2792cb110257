"""PII detection (table-driven: detections and non-detections) and redaction in Engram.remember."""

from __future__ import annotations

import json

import pytest

from engram.privacy import PiiPolicy, detect, iban_valid, luhn_valid, redact

CASES = [
    # text, expected findings as (kind, text)
    ("write to jane.doe+work@example.co.uk today", [("email", "jane.doe+work@example.co.uk")]),
    # The longest local part and domain label the RFCs allow (64, 63) are still found whole: the bounds
    # keep a long run without an "@" (an image's base64 in a message) from being scanned once per word.
    (f"to {'x' * 64}@{'d' * 63}.example.com!", [("email", f"{'x' * 64}@{'d' * 63}.example.com")]),
    # A longer local part than RFC 5321 allows is still somebody's address, found whole: it was not
    # found at all, or from its last word start on ("john.smith[REDACTED:email]").
    (f"to {'x' * 65}@example.com!", [("email", f"{'x' * 65}@example.com")]),
    (f"to john.smith.{'x' * 60}@example.com", [("email", f"john.smith.{'x' * 60}@example.com")]),
    # Dots and signs before an address are not part of it; a run that no word boundary starts is none.
    ("see --jane@example.com and .bob@example.org", [("email", "jane@example.com"), ("email", "bob@example.org")]),
    # Internationalised addresses (RFC 6531 local parts, IDN domains and top-level domains) are
    # somebody's as ASCII ones are: none was found, or only its ASCII end ("a@b.xn" of an A-label).
    ("écrire à josé@exemple.fr demain", [("email", "josé@exemple.fr")]),
    ("邮箱 用户@例子.广告 谢谢", [("email", "用户@例子.广告")]),
    ("an Müller: müller@bücher.de, oder Ünal@example.com", [("email", "müller@bücher.de"), ("email", "Ünal@example.com")]),
    ("decomposed jose\u0301@exemple.fr", [("email", "jose\u0301@exemple.fr")]),  # "é" as "e" and its combining accent
    ("संपर्क: संपर्क@डाटामेल.भारत के लिए", [("email", "संपर्क@डाटामेल.भारत")]),  # vowel signs and viramas are marks
    ("пишите ivan@пример.рф, a@b.xn--p1ai", [("email", "ivan@пример.рф"), ("email", "a@b.xn--p1ai")]),
    ("«josé@exemple.fr»", [("email", "josé@exemple.fr")]),
    # A domain label is at most 63 characters (RFC 1035): a longer one is no DNS name, no address.
    (f"to x@{'d' * 64}.com and y@sub.{'d' * 64}.com", []),
    # No top-level domain, a numeric one, a "_" in the domain, or no local part: no address.
    ("ask @bob or @josé; a@b, a@1.2.3, foo@bar_baz.com, 用户@例子", []),
    # Code that reads as one is taken for one: redacting "foo@bar.baz" costs less than storing an address.
    ("m = foo@bar.baz() if x else a @ b", [("email", "foo@bar.baz")]),
    ("call +44 20 7946 0958 after lunch", [("phone", "+44 20 7946 0958")]),
    ("office (555) 123-4567", [("phone", "(555) 123-4567")]),
    ("mobile 555.123.4567", [("phone", "555.123.4567")]),
    ("+1 (555) 123-4567 is the desk", [("phone", "+1 (555) 123-4567")]),
    ("visa 4111 1111 1111 1111 exp 12/29", [("card", "4111 1111 1111 1111")]),
    ("mc 5500-0000-0000-0004", [("card", "5500-0000-0000-0004")]),
    ("amex 378282246310005", [("card", "378282246310005")]),
    ("iban DE89 3704 0044 0532 0130 00 OK", [("iban", "DE89 3704 0044 0532 0130 00")]),
    ("GB82WEST12345698765432", [("iban", "GB82WEST12345698765432")]),
    ("openai sk-proj-abcdefghijklmnopqrstuvwxyz123", [("api_key", "sk-proj-abcdefghijklmnopqrstuvwxyz123")]),
    ("aws AKIAIOSFODNN7EXAMPLE", [("api_key", "AKIAIOSFODNN7EXAMPLE")]),
    ("gh ghp_0123456789abcdefghijABCDEFGHIJ012345", [("api_key", "ghp_0123456789abcdefghijABCDEFGHIJ012345")]),
    ("Authorization: Bearer abcdef0123456789abcdef", [("api_key", "Bearer abcdef0123456789abcdef")]),
    ("config api_key=abcd1234efgh5678", [("api_key", "api_key=abcd1234efgh5678")]),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     [("api_key", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")]),
    ("mail a@b.io, card 4242424242424242", [("email", "a@b.io"), ("card", "4242424242424242")]),
    ("my SSN is 123-45-6789.", [("ssn", "123-45-6789")]),
    ("ssn 078-05-1120, phone (555) 123-4567", [("ssn", "078-05-1120"), ("phone", "(555) 123-4567")]),
    # non-detections: ordinary numbers, dates, times, versions, money, ids
    ("the meeting is on 2026-02-09 at 10:30", []),
    ("dates like 09/02/2026 and 2026.02.09", []),
    ("we sold 1234567 units for $1,234,567.89", []),
    ("order number 1234567890123", []),
    ("card-like but bad checksum 4111 1111 1111 1112", []),
    ("luhn-valid without an issuer prefix 0000000000000000", []),
    ("version 1.2.3.4 and python 3.11.9", []),
    ("pi is 3.14159265358979", []),
    ("unix time 1700000000 and port 8080", []),
    # never issued as social security numbers (area 000, 666, 9xx; group 00; serial 0000), or part of a longer code
    ("codes 000-12-3456 666-12-3456 900-12-3456 123-00-4567 123-45-0000", []),
    ("part numbers 123-45-6789-01 and A123-45-6789", []),
    ("ISBN 978-3-16-148410-0", []),
    ("an IBAN-shaped code DE00 0000 0000 0000 0000 00 with a bad checksum", []),
    ("the email field is empty; user @ home", []),
    ("the sk-learn library and skeleton keys", []),
    ("population 8 000 000 000 people", []),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_detections_and_non_detections(text, expected):
    assert [(f.kind, f.text) for f in detect(text)] == expected


def test_long_runs_of_any_script_are_screened_in_linear_time():
    # Address characters now include every script's letters and marks: a local part still starts
    # only where a run of them does, so a long run of Han text, decomposed accents or labels (a
    # pasted book, no spaces) is scanned once, not once per character (hours, at this length, so a
    # quadratic pattern shows as this test not ending). No timed assertion: these machines are shared.
    runs = ["用户" * 200_000, "用户" * 200_000 + "@例子.广告", "e\u0301" * 200_000 + "@", "x@" + "例." * 200_000,
            "a@" * 200_000, ("用" * 62 + ".") * 6_000]
    found = [[(f.start, f.end) for f in detect(run, kinds=("email",))] for run in runs]
    assert found == [[], [(0, 400_006)], [], [], [], []]


def test_checksums():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB83WEST12345698765432")


def test_redact_replaces_each_finding():
    text = "mail a@b.io or call +44 20 7946 0958"
    assert redact(text, detect(text)) == "mail [REDACTED:email] or call [REDACTED:phone]"


def test_kinds_can_be_narrowed():
    assert detect("a@b.io 4111111111111111", kinds=("card",))[0].kind == "card"


def test_warn_mode_stores_and_warns_without_echoing_the_value(make_engram):
    engram = make_engram("sqlite")
    result = engram.remember("the admin is ops@example.com")
    assert result.memory.content == "the admin is ops@example.com"
    (warning,) = result.warnings
    assert "e-mail address (1)" in warning and "ops@example.com" not in warning


def test_redact_mode_redacts_before_store_index_embedding_and_audit(make_engram, embedder):
    from engram.audit import AuditQuery

    seen: list[str] = []

    class Spy(type(embedder)):
        def embed(self, texts):  # noqa: ANN001, ANN201
            seen.extend(texts)
            return super().embed(texts)

    engram = make_engram("sqlite", embedder=Spy(), privacy=PiiPolicy("redact"))
    result = engram.remember("card 4111 1111 1111 1111 belongs to ops@example.com")
    assert result.memory.content == "card [REDACTED:card] belongs to [REDACTED:email]"
    assert "4111" not in result.memory.key and "example" not in result.memory.key
    assert any("redacted" in w for w in result.warnings)
    assert seen == ["card [REDACTED:card] belongs to [REDACTED:email]"]
    assert engram.recall("example.com", mode="text").hits == ()
    raw = open(engram.store.path, "rb").read() + open(str(engram.store.path) + "-wal", "rb").read()
    assert b"ops@example.com" not in raw and b"4111 1111" not in raw
    audit = engram.backend.audit_log().query(AuditQuery())
    assert all("example.com" not in str(a.detail) for a in audit)


def test_off_mode_does_nothing(make_engram):
    result = make_engram("inmemory", privacy=PiiPolicy("off")).remember("ops@example.com")
    assert result.warnings == ()


def test_redact_mode_keeps_an_updates_audit_entry_redacted_old_and_new(make_engram):
    from engram.audit import AuditQuery

    engram = make_engram("sqlite", privacy=PiiPolicy("redact"))
    engram.remember("the admin is ops@example.com", key="admin")
    engram.update("admin", content="the new admin is dev@example.com", search_context="mail root@example.com")
    (entry,) = engram.backend.audit_log().query(AuditQuery(action="updated"))
    assert entry.detail["changed"] == ["content", "search_context"]  # the context is named, never copied
    assert entry.detail["content"] == "the new admin is [REDACTED:email]"
    assert entry.detail["previous"] == {"content": "the admin is [REDACTED:email]"}
    assert "example.com" not in json.dumps(entry.detail)


def test_redact_mode_screens_metadata_at_every_write_path(make_engram, tmp_path):
    # Only the text was screened: metadata kept what redact masked, and adapters keep a raw copy of
    # the text there (a LangGraph item's value came back with the address in it).
    engram = make_engram("sqlite", privacy=PiiPolicy("redact"))
    result = engram.remember("see the note", metadata={"owner": "ops@example.com", "calls": ["+44 20 7946 0958", 3]})
    assert result.memory.metadata == {"owner": "[REDACTED:email]", "calls": ["[REDACTED:phone]", 3]}
    assert any(w.startswith("in metadata: redacted") for w in result.warnings)
    updated = engram.update(result.memory, metadata='{"owner": "dev@example.com"}')  # JSON text too
    assert updated.memory.metadata == {"owner": "[REDACTED:email]"}
    (many,) = engram.remember_many([{"content": "bulk", "metadata": {"to": "root@example.com"}}])
    assert many.memory.metadata == {"to": "[REDACTED:email]"}
    source = tmp_path / "mem0.json"
    source.write_text(json.dumps({"results": [{"id": "m1", "memory": "likes tea", "user_id": "alex",
                                               "metadata": {"mail": "alex@example.com"}}]}))
    engram.import_from(source)
    (imported,) = engram.for_agent("alex").list()
    assert "example.com" not in json.dumps(imported.metadata)
    raw = open(engram.store.path, "rb").read() + open(str(engram.store.path) + "-wal", "rb").read()
    assert b"example.com" not in raw and b"7946" not in raw
    warned = make_engram("inmemory").remember("x", metadata={"owner": "ops@example.com"})
    assert warned.memory.metadata == {"owner": "ops@example.com"} and "in metadata: possible PII" in warned.warnings[0]
