"""PII detection and redaction, applied to content before anything is written or embedded.

Detectors aim for few false alarms on ordinary text: dates, times, version numbers, amounts and
order numbers must not trip them. So numbers need structure *and* a checksum where one exists:
card numbers need an issuer prefix, 13-19 digits and a valid Luhn sum; IBANs need a country code,
the right shape and ISO 13616's mod-97 remainder of 1; phone numbers need a leading ``+`` country
code or the grouped ``(555) 123-4567`` shape; API keys are recognised by their vendors' prefixes
(``sk-``, ``AKIA``, ``ghp_``, ``xox?-``, ``AIza``), JWTs, ``Bearer`` tokens and ``api_key=...``.

``PiiPolicy`` is the one place every write path asks: ``Engram.remember``/``update``/``replace``/
``remember_many`` (``screen``, ``screen_metadata``), imports from other systems and engram's own
snapshot or memory folder (``screen_memory``; the file's version of a memory kept in a
``.conflict`` file, ``screen_copy``), and conversation history (``screen_message``: each
appended message, at every door, and each summary, compaction's included). ``warn`` (default)
stores the text and reports the kinds found (never the values): in ``WriteResult.warnings``, an
import's warnings, ``History.append_reported``'s answer; ``redact`` replaces each finding with
``[REDACTED:kind]`` first, so neither the store, the full-text index, the embedder nor the audit
log ever sees it; ``off`` does nothing. Redaction is idempotent (a marker is never found again),
so content stored redacted round-trips byte for byte through engram's own export and import.
Text that is JSON (a tool's result, a tool call's arguments, a record an adapter keeps) is
screened string by string and number by number, so it stays JSON. Tool call ids are identifiers
and kept as given (``screen_message``). A marker can be longer than what it replaces, and two names
can become one: text that fits its limit only as given (``check_redacted_length``), and two names of
one JSON object made the same, are refused with ``ValidationError`` rather than cut or dropped. A
copy that must stay as given (the agent's response cache) is not written at all when it holds PII
under ``redact`` (``withholds``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, field_validator

from engram.errors import ConfigError, ValidationError
from engram.settings_section import SettingsSection

if TYPE_CHECKING:
    from engram.model import Memory, Message

PiiKind = Literal["email", "phone", "card", "api_key", "iban", "ssn"]
PII_KINDS: tuple[str, ...] = ("email", "phone", "card", "api_key", "iban", "ssn")
_LABELS = {"email": "e-mail address", "phone": "phone number", "card": "card number", "api_key": "API key or token",
           "iban": "IBAN", "ssn": "social security number"}


class PrivacySettings(SettingsSection):
    """``[privacy]``: PII handling on store, and encryption at rest of the SQLite file."""

    pii: Literal["off", "warn", "redact"] = "warn"
    kinds: list[PiiKind] = Field(default_factory=lambda: list(PII_KINDS))  # type: ignore[arg-type]
    # SQLCipher key for the SQLite file (needs ``engram-recall[lifecycle]``); None keeps the file in clear.
    encryption_key: SecretStr | None = None
    # Or read the key from this file (first line), so it stays out of the config file.
    encryption_key_file: Path | None = None

    @field_validator("encryption_key")
    @classmethod
    def _key_not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        # A blank key would open the file in clear while the setting reads as set (and hide a key
        # file): refused, as an empty key file is. An empty environment variable counts as unset.
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is empty: give a key, or leave it unset for a file in clear")
        return value

    @property
    def encrypted(self) -> bool:
        """Whether a key is configured (a key file counts before it is read)."""
        return self.encryption_key is not None or self.encryption_key_file is not None

    def key(self) -> str | None:
        """The configured encryption key, if any; raises ``ConfigError`` for an unreadable key file."""
        if self.encryption_key is not None:
            return self.encryption_key.get_secret_value()
        if self.encryption_key_file is not None:
            try:
                text = self.encryption_key_file.expanduser().read_text("utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"privacy.encryption_key_file: cannot read {self.encryption_key_file}: {exc}") from None
            if not text:
                raise ConfigError(f"privacy.encryption_key_file: {self.encryption_key_file} is empty")
            return text.splitlines()[0]
        return None


@dataclass(frozen=True, slots=True)
class PiiFinding:
    kind: str
    start: int
    end: int
    text: str


# --- checksums ---------------------------------------------------------------------------------

def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check used by payment card numbers."""
    if not digits.isdigit():
        return False
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    compact = iban.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


_CARD_PREFIX = re.compile(r"^(4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|64[4-9]|65|62)")


def _card_ok(raw: str) -> bool:
    digits = re.sub(r"[ -]", "", raw)
    return 13 <= len(digits) <= 19 and bool(_CARD_PREFIX.match(digits)) and luhn_valid(digits)


def _phone_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    return 8 <= len(digits) <= 15


# --- detectors ---------------------------------------------------------------------------------

_Check = Callable[[str], bool]


def _combining_marks() -> str:
    r"""Every Unicode combining mark (categories Mn, Mc, Me: the accent of a decomposed "é", the
    vowel signs and viramas of Indic scripts), as the inside of a regex character class. ``\w``
    leaves them out, so "हिन्दी" is no word to it; ``re`` has no ``\p{M}``, so the class is built from
    ``unicodedata`` (the same Unicode version as ``re``). Only the Basic Multilingual Plane's: it
    holds every living script's, and ``re`` tests those with one table look-up, but each range
    beyond it one by one (the 200 there, historic scripts' and variation selectors, made every
    character of a long run cost five times as much)."""
    import unicodedata

    marks = [c for c in range(0x300, 0x10000) if unicodedata.category(chr(c))[0] == "M"]
    ranges: list[str] = []
    start = previous = marks[0]
    for code in [*marks[1:], -1]:
        if code != previous + 1:
            ranges.append(chr(start) if start == previous else f"{chr(start)}-{chr(previous)}")
            start = code
        previous = code
    return "".join(ranges)


@functools.cache
def _detectors() -> list[tuple[str, re.Pattern[str], _Check | None]]:
    """Each detector: its kind, its pattern, and the check a match must pass. Built at the first
    screening, not at import: ``config`` imports this module for every command (``engram recall``,
    ``engram mcp``'s launch), and the e-mail pattern's class of combining marks takes ~20 ms to
    build and compile, which only a screening needs."""
    # Marks, and the zero-width (non-)joiner IDNA allows in Persian and Indic labels (RFC 5892 CONTEXTJ).
    marks = _combining_marks() + "\u200c\u200d"
    # The characters of an address's local part (the class's inside): ASCII letters, digits and
    # ``._%+-`` as before, and, as RFC 6531 allows, any script's letters and digits with their marks.
    local = rf"\w.%+\-{marks}"
    # A domain label: letters, digits and marks of any script (an IDN's U-label, "bücher", "例子") and
    # "-", no "_"; at most 63 characters, RFC 1035's bound on a label (its A-label, "xn--bcher-kva", is
    # never shorter than its U-label). Longer, it is no DNS name, so no mail reaches it: not an address.
    label = rf"(?:[^\W_]|[\-{marks}]){{1,63}}"
    # The top-level domain: letters of any script ("fr", "中国", "рф"), or an A-label ("xn--p1ai"),
    # never digits (RFC 3696: "a@1.2.3" is no address); then no further letter, digit or mark.
    tld = rf"(?:xn--[A-Za-z0-9-]{{1,59}}|(?:[^\W\d_]|[{marks}]){{2,63}})(?![\w{marks}])"
    return [
        # The local part is looked for only from the start of a run of its characters (the lookbehind),
        # its leading dots and signs left out (``pii``: the finding): from every word start in a long run
        # (URL-safe base64, an image in a message's JSON) the whole run was scanned for an "@", and
        # screening an 800 KB image took minutes. So it needs no bound: RFC 5321's 64 characters, the
        # bound that stood in for this, left a longer one unfound, or found from its last word start on
        # with the rest kept ("john.smith[REDACTED:email]"), and an address written against the RFC is
        # still somebody's. The domain's labels keep theirs (``label``), which also bounds the work
        # each "@" of a run costs. Internationalised addresses (RFC 6531: "josé@exemple.fr",
        # "用户@例子.广告") are found as ASCII ones are; in a script written without spaces the run
        # around one is taken whole, more than the address but nothing of it left.
        ("email", re.compile(rf"(?<![{local}])[.%+-]*\b(?P<pii>\w[{local}]*@{label}(?:\.{label})*\.{tld})"), None),
        ("api_key", re.compile(
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
            r"|AKIA[0-9A-Z]{16}"
            r"|gh[pousr]_[A-Za-z0-9]{30,}"
            r"|github_pat_[A-Za-z0-9_]{30,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}"
            r"|AIza[0-9A-Za-z_-]{35}"
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        ), None),
        ("api_key", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}"), None),
        ("api_key", re.compile(
            r"(?i)\b(?:api[_-]?key|secret|access[_-]?token|auth[_-]?token|password|passwd)\b\s*[:=]\s*[\"']?[^\s\"']{8,}"
        ), None),
        ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b"), iban_valid),
        ("card", re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])"), _card_ok),
        # A US social security number as written, 123-45-6789: never area 000, 666 or 9xx, group 00
        # or serial 0000 (none is issued), so dashed codes of that shape are rarely taken for one.
        ("ssn", re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])"), None),
        # International form: +CC then groups; or the grouped North American form.
        ("phone", re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?!\d)"), _phone_ok),
        ("phone", re.compile(r"(?<![\w-])\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}(?![\d-])|(?<![\w-])\d{3}[ .]\d{3}[ .]\d{4}(?![\w-])"),
         _phone_ok),
    ]


# What ``redact`` writes in place of a finding. Text touching one is never a finding again
# ("password: [REDACTED:api_key]" would be), so screening redacted text changes nothing.
_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
# The fewest characters a finding takes (an e-mail address, ``a@b.io``): shorter text holds none.
_SHORTEST_FINDING = 6
# A string of valid JSON text (names too: quotes around characters or backslash escapes), or a
# number: outside its strings, valid JSON has digits only in numbers.
_JSON_SCALAR = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')
# A surrogate on its own: valid JSON text spells one as an escape (``"\\ud800"``), never as itself.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_string(text: str) -> str:
    """``text`` written as a JSON string, non-ASCII kept as itself but for a lone surrogate (a
    string of the JSON given may hold one as an escape), written as its escape again: as itself it
    is no UTF-8, and the redacted text was refused as holding one the text given did not."""
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", json.dumps(text, ensure_ascii=False))


def detect(text: str, kinds: Sequence[str] = PII_KINDS) -> list[PiiFinding]:
    """Every PII finding in ``text``, in order, without overlaps (earlier detectors win); text
    overlapping a ``[REDACTED:kind]`` marker is not one."""
    found: list[PiiFinding] = []
    markers = [(m.start(), m.end()) for m in _MARKER.finditer(text)]
    for kind, pattern, check in _detectors():
        if kind not in kinds:
            continue
        for match in pattern.finditer(text):
            # (a pattern's ``pii`` group, where it has one, is the finding; what it matched around it is context)
            begin = match.start("pii") if "pii" in pattern.groupindex else match.start()
            raw = text[begin:match.end()]
            # A greedy match may have swallowed a following group ("... 3000 OK"): shorten and retry.
            while check is not None and not check(raw) and re.search(r"[ .-]", raw):
                raw = re.split(r"[ .-](?=[^ .-]*$)", raw)[0]
            if check is not None and not check(raw):
                continue
            start, end = begin, begin + len(raw)
            if any(start < f.end and f.start < end for f in found) or any(start < e and s < end for s, e in markers):
                continue
            found.append(PiiFinding(kind, start, end, raw))
    return sorted(found, key=lambda f: f.start)


def redact(text: str, findings: Sequence[PiiFinding]) -> str:
    """``text`` with each finding replaced by ``[REDACTED:kind]``."""
    out, last = [], 0
    for finding in sorted(findings, key=lambda f: f.start):
        out.append(text[last:finding.start])
        out.append(f"[REDACTED:{finding.kind}]")
        last = finding.end
    out.append(text[last:])
    return "".join(out)


def check_redacted_length(field: str, given: str, stored: str, limit: int) -> str:
    """``stored`` (``given`` as screened) when it fits ``limit``; else ``ValidationError`` naming
    ``field``. A ``[REDACTED:kind]`` marker can be longer than what it replaces (``a@b.io``: 6
    characters, its marker 16), so text within the limit as given can pass it once redacted. It is
    refused, not cut: cutting would drop the end of what was written, unsaid. Text already past the
    limit as given is left to the field's own check, which says so in its usual words."""
    if isinstance(given, str) and isinstance(stored, str) and len(given) <= limit < len(stored):
        raise ValidationError(field, f"is {len(stored)} characters once possible PII was redacted ({len(given)} as "
                              f"given; a [REDACTED:kind] marker can be longer than what it replaces); the maximum is "
                              f"{limit}", f"up to {limit} characters once redacted")
    return stored


def _names_collide(where: str, name: str) -> ValidationError:
    """The error for two names of one JSON object that redaction makes one: refused, as keeping
    both would hand a reader one of the two values (the other dropped, unsaid)."""
    return ValidationError(where, f"two of its names become {json.dumps(name, ensure_ascii=False)} once possible PII "
                           "is redacted, and an object holds each name once",
                           "names that stay distinct once PII is redacted")


def _object_names(text: str) -> list[list[str]]:
    """The names of each object in JSON ``text``, repeats included, objects in the order the
    parser closes them (the same order for any text of the same shape). Raises ``ValueError`` for
    text that is no JSON, one nested past the recursion limit (``[[[[...``) included."""
    found: list[list[str]] = []

    def names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append([name for name, _ in pairs])
        return {}

    try:
        json.loads(text, object_pairs_hook=names)
    except RecursionError:  # (what a message of 100,000 "[" raised, out of every door)
        raise ValueError("nested too deeply") from None
    return found


@dataclass(frozen=True, slots=True)
class PiiPolicy:
    """What every write of user text does with PII: ``warn``, ``redact`` or ``off`` (module doc)."""

    mode: Literal["off", "warn", "redact"] = "warn"
    kinds: tuple[str, ...] = PII_KINDS

    @classmethod
    def from_settings(cls, settings: PrivacySettings) -> PiiPolicy:
        return cls(settings.pii, tuple(settings.kinds))

    def screen(self, content: str, *, field: str = "content", as_json: bool = True) -> tuple[str, list[str]]:
        """The content to store and the warnings to report (kinds found, never the values). Content
        that is a JSON object or array stays that JSON (``_screened_text``); ``as_json=False`` reads
        it as plain text all the same (a summary engram writes, refused by nobody). Raises
        ``ValidationError`` naming ``field`` when redaction would make two names of one of its
        objects the same."""
        if self.mode == "off" or not isinstance(content, str):
            return content, []
        counts: dict[str, int] = {}
        screened = self._screened_text(content, counts, field) if as_json else self._screened(content, counts)
        return screened, self._warnings(counts)

    def screen_metadata(self, metadata: Any) -> tuple[Any, list[str]]:
        """Metadata with every string (in nested objects and lists too, names included) screened as
        content is, and the warnings to report. A memory's metadata is stored, exported and handed
        back beside its text, and adapters keep a raw copy of that text there (LangGraph's item
        value, ADK's ``Content``): screening the text alone kept in metadata what ``redact`` masked.
        Raises ``ValidationError`` (``metadata``, or the nested object's path) when redaction would
        make two names of one object the same."""
        if self.mode == "off":
            return metadata, []
        counts: dict[str, int] = {}
        screened = self._walk(metadata, counts, "metadata")
        return screened, [f"in metadata: {w}" for w in self._warnings(counts)]

    def screen_message(self, message: Message) -> tuple[Message, list[str]]:
        """A conversation message as it is to be stored, and the warnings to report: its content,
        its tool calls' arguments and its metadata screened as a memory's content and metadata are
        (a tool call's arguments carry what the user said: ``send_mail(to=...)``; a tool's result,
        often JSON, what it found). Tool call ids, and the id of the call a result answers, are kept
        as given: they are identifiers (a provider's opaque ``call_...``), which must stay distinct
        and pair a result with its call whatever the setting was when each was stored; a marker in
        their place made two ids one (``call_4111111111111111``, a Luhn-valid run, read as a card)
        and parted a result from a call stored before ``redact`` was set. Raises
        ``ValidationError`` (``content``, ``tool_calls.arguments``, ``metadata``) when redaction
        would make two names of one JSON object the same."""
        if self.mode == "off":
            return message, []
        counts: dict[str, int] = {}
        content = self._screened_text(message.content, counts, "content")
        calls = tuple(dataclasses.replace(call, arguments=self._screened_json(call.arguments, counts, "tool_calls.arguments"))
                      for call in message.tool_calls)
        metadata, in_metadata = self.screen_metadata(message.metadata) if message.metadata else (message.metadata, [])
        screened = dataclasses.replace(message, content=content, tool_calls=calls, metadata=metadata)
        return screened, [*self._warnings(counts), *in_metadata]

    def proposed_key(self, key: str | None) -> str | None:
        """A key engram itself proposes for what it stores (its model's key for a note, an
        extractor's slot key for a fact), or None when ``redact`` finds PII in it: the caller then
        keys the text as stored (``key_from_content``, or the engine's own key). Such keys come from
        what was said, and a model may spell out in one what the message masked
        (``admin-ops@example.com``), which the store keeps as given in the key column, the audit
        trail and the memory folder. Dropped rather than redacted in place: two keys redacted alike
        (``admin-[REDACTED:email]``) would make facts about two addresses one memory, the second
        overwriting the first. Keys a caller gives are its own and stay as given (module doc)."""
        if not key or self.mode != "redact":
            return key
        return None if detect(key, self.kinds) else key

    def withholds(self, texts: Iterable[str]) -> bool:
        """Whether a copy of ``texts`` that must stay as given (a cached model answer, which a hit
        hands back as the live call did) may not be written: under ``redact``, when any of them
        holds PII. Redacting such a copy would change what it answers, so it is not kept at all."""
        return self.mode == "redact" and any(detect(text, self.kinds) for text in texts)

    def screen_memory(self, memory: Memory) -> tuple[Memory, list[str]]:
        """A memory as an import of engram's own snapshot or memory folder stores it (content,
        ``search_context`` and metadata screened as ``Engram.remember`` screens them), and the
        warnings to report. Its id, key and other fields are kept: they name it."""
        if self.mode == "off":
            return memory, []
        counts: dict[str, int] = {}
        content = self._screened_text(memory.content, counts, "content")
        context = None if memory.search_context is None else self._screened_text(memory.search_context, counts,
                                                                                  "search_context")
        metadata, in_metadata = self.screen_metadata(memory.metadata) if memory.metadata else (memory.metadata, [])
        screened = dataclasses.replace(memory, content=content, search_context=context, metadata=metadata)
        return screened, [*self._warnings(counts), *in_metadata]

    def screen_copy(self, content: str, search_context: str | None,
                    metadata: Mapping[str, Any]) -> tuple[str, str | None, Mapping[str, Any]]:
        """A memory's texts as engram keeps them in a copy it writes for a person to read (the
        file's version of a memory kept in a ``.conflict`` file): as ``screen_memory`` stores them,
        so the copy holds no more than the store would, and taking it stores the same text. Never
        refused, as the copy is not stored: where storing would be (two names of a JSON object made
        one), the texts are screened as plain text and metadata names made one are told apart by a
        count (``[REDACTED:email] (2)``), so nothing but the PII is lost from what the person wrote."""
        if self.mode != "redact":
            return content, search_context, metadata
        counts: dict[str, int] = {}
        try:
            content = self._screened_text(content, counts, "content")
        except ValidationError:
            content = self._screened(content, counts)
        if search_context is not None:
            try:
                search_context = self._screened_text(search_context, counts, "search_context")
            except ValidationError:
                search_context = self._screened(search_context, counts)
        if metadata:
            try:
                metadata = self._walk(metadata, counts, "metadata")
            except ValidationError:
                metadata = self._walk(metadata, counts, "metadata", tell_apart=True)
        return content, search_context, metadata

    def _screened_text(self, text: str, counts: dict[str, int], where: str) -> str:
        """``text`` as stored: a JSON object or array (a tool's result, a record an adapter keeps as
        text) is screened as JSON (``_screened_json``), so it stays JSON with the same meaning;
        other text as text. Screened as text, JSON broke: a card number as a JSON number became a
        bare marker (``{"card": [REDACTED:card]}``), ``password: ...`` took the backslash of an
        escaped quote with it, and an address escaped as ``\\u0040`` was not found at all."""
        if text.lstrip().startswith(("{", "[")):
            return self._screened_json(text, counts, where)
        return self._screened(text, counts)

    def _screened_json(self, text: str, counts: dict[str, int], where: str) -> str:
        """JSON text (a tool call's arguments) with each of its strings, names included, and each of
        its numbers screened in place: the rest of the text stays byte for byte, so numbers keep
        every digit (``1e400`` read and written again became ``Infinity``, no JSON at all), and a
        repeated name stays. A finding cut out of the text itself could take an escape's backslash
        with it, so each string is read, screened and written again as JSON; a number that is a
        finding (a card number) becomes the marker as a JSON string. Text that is no JSON is
        screened as text. Two names of one object made the same by redaction are refused
        (``ValidationError`` naming ``where``); names the text itself repeats are kept, as given."""
        try:
            names = _object_names(text)
        except ValueError:
            return self._screened(text, counts)

        def screened(scalar: re.Match[str]) -> str:
            token = scalar.group()
            if len(token) < _SHORTEST_FINDING + 2:  # (quotes, or a sign, included) none can hold one
                return token
            if token.startswith('"'):  # a string may hold JSON text itself (a result encoded twice)
                value = json.loads(token)
                redacted = self._screened_text(value, counts, where)
            elif token.isdigit():  # an integer, as written: a card number given as a number
                value = token
                redacted = self._screened(value, counts)
            else:  # a fraction's digits are no card number (0.4111111111111111 is a float, 2.5% of them pass Luhn)
                return token
            return token if redacted == value else _json_string(redacted)

        out = _JSON_SCALAR.sub(screened, text)
        if out != text:
            for before, after in zip(names, _object_names(out), strict=True):
                if len(set(after)) < len(set(before)):
                    raise _names_collide(where, next(name for name in after if after.count(name) > before.count(name)))
        return out

    def _walk(self, value: Any, counts: dict[str, int], where: str, *, tell_apart: bool = False) -> Any:
        """``value`` with every string in it (in nested objects and lists too, names included)
        screened; ``where`` is its path, for the error when two names of one object collide.
        ``tell_apart`` (``screen_copy``): no error, a name made one with another gets a count, and
        a string holding JSON whose names collide is screened as plain text."""
        if isinstance(value, str):
            try:
                return self._screened_text(value, counts, where)
            except ValidationError:
                if not tell_apart:
                    raise
                return self._screened(value, counts)
        if isinstance(value, int) and not isinstance(value, bool):
            return self._screened_number(value, counts)
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for name, item in value.items():
                # A name that is a number (``{4111111111111111: ...}`` from Python) is written as its
                # digits when the metadata is stored as JSON, after this screening: screened as
                # those digits here, or the store kept what redact masks in a name.
                screened = (self._screened(name, counts) if isinstance(name, str)
                            else self._screened_number(name, counts) if isinstance(name, int) and not isinstance(name, bool)
                            else name)
                if screened in out:
                    if not tell_apart:
                        raise _names_collide(where, screened)
                    n = 2
                    while f"{screened} ({n})" in out:
                        n += 1
                    screened = f"{screened} ({n})"
                out[screened] = self._walk(item, counts, f"{where}.{screened}", tell_apart=tell_apart)
            return out
        if isinstance(value, list | tuple):
            return [self._walk(item, counts, f"{where}[{i}]", tell_apart=tell_apart) for i, item in enumerate(value)]
        return value

    def _screened_number(self, value: int, counts: dict[str, int]) -> int | str:
        """An integer as stored: itself, or the marker (text) when its digits are a finding (a card
        number given as a number), masked as the same digits in text would be."""
        written = str(value)
        redacted = self._screened(written, counts)
        return value if redacted == written else redacted

    def _screened(self, text: str, counts: dict[str, int]) -> str:
        """``text`` as stored (redacted when ``redact``); the kinds found are added to ``counts``.
        Detected again on the redacted text until nothing is found: a finding can hide the one
        beside it ("(555) 123-4567 4111 1111 1111 1111": the card's digits are read on from the
        phone's and fail the card check), which a second screening (a re-import) would otherwise
        redact, leaving it stored until then. Each round turns text into a marker, never found
        again, so this ends; under ``warn`` the rounds only count."""
        redacted = text
        while findings := detect(redacted, self.kinds):
            for finding in findings:
                counts[finding.kind] = counts.get(finding.kind, 0) + 1
            redacted = redact(redacted, findings)
        return redacted if self.mode == "redact" else text

    def _warnings(self, counts: Mapping[str, int]) -> list[str]:
        if not counts:
            return []
        listed = ", ".join(f"{_LABELS[k]} ({n})" for k, n in counts.items())
        if self.mode == "redact":
            return [f"redacted possible PII before storing: {listed}"]
        return [f"possible PII stored: {listed}; set privacy.pii = \"redact\" to mask it"]
