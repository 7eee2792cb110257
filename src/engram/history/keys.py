"""Conversation persistence keys: ``channel:chat:thread`` (sclaw).

The key names where a conversation happens, not which session object holds it, so history
survives session-id rotation: a recreated session with the same channel, chat and thread finds
its messages again. The thread part may be empty (``telegram:42:``). Parts cannot contain ``:``.
Stores keep the canonical form (``str``, always three parts, so ``telegram:42`` and
``telegram:42:`` are one conversation); what users are shown is the form they write
(``shown``), which every door takes back.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from engram import jsondoc
from engram.errors import ValidationError
from engram.model.values import usable_text

# A lone surrogate (\ud800-\udfff) is no part's character either: no store can encode it.
_PART = re.compile(r"^[^\s:\x00-\x1f\x7f\ud800-\udfff]{1,128}$")
_NOT_IN_A_PART = re.compile(r"[\s:\x00-\x1f\x7f\ud800-\udfff]+")
PART_ALLOWED = '1-128 characters without ":" or spaces'  # one part of a key: what an adapter's id may be
_ALLOWED = f"channel:chat or channel:chat:thread, each part {PART_ALLOWED}"


@dataclass(frozen=True, slots=True)
class ConversationKey:
    channel: str
    chat: str
    thread: str = ""

    def __str__(self) -> str:
        return f"{self.channel}:{self.chat}:{self.thread}"

    @property
    def shown(self) -> str:
        """The key as a user writes it: ``telegram:42`` for no thread (the stored form ends in
        ``:``), ``slack:C1:T7`` with one. Either form names the same conversation."""
        return f"{self.channel}:{self.chat}" if not self.thread else str(self)


def usable_part(text: str) -> str:
    """``text`` as a key's part: itself when it is one, else its usable characters (runs of
    spaces, ``:`` and control characters as ``-``, at most 110) and 8 hex digits of its SHA-256,
    so two texts never share a part. For ids from other systems (an import's thread ids)."""
    if _PART.match(text):
        return text
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{_NOT_IN_A_PART.sub('-', text).strip('-')[:110] or 'part'}-{digest}"


def conversation_key(channel: str, chat: str, thread: str | None = None) -> str:
    """The persistence key for a conversation; raises ``ValidationError`` for an unusable part."""
    for name, value in (("channel", channel), ("chat", chat), ("thread", thread or "")):
        if isinstance(value, str):
            # A lone surrogate passed the part's pattern, and every store then failed to encode
            # the key (UnicodeEncodeError, an "internal error" at the CLI): refused naming the part.
            usable_text(f"key.{name}", value)
    for name, value in (("channel", channel), ("chat", chat)):
        if not isinstance(value, str) or not _PART.match(value):
            raise ValidationError(f"key.{name}", f"{jsondoc.shown(value)} cannot be part of a key", _ALLOWED)
    if thread and not _PART.match(thread):
        raise ValidationError("key.thread", f"{jsondoc.shown(thread)} cannot be part of a key", _ALLOWED)
    return str(ConversationKey(channel, chat, thread or ""))


def parse_conversation_key(text: str) -> ConversationKey:
    """``channel:chat`` or ``channel:chat:thread`` as a key; raises ``ValidationError``."""
    if not isinstance(text, str):
        raise ValidationError("key", f"got {type(text).__name__}", _ALLOWED)
    usable_text("key", text)
    parts = text.split(":")
    if len(parts) == 1 and _PART.match(text):
        # A bare session id (ClawCode's sess_123) is not read in some default channel: a bare id
        # already means "that chat on any channel" where a door takes one (key_or_chat).
        raise ValidationError("key", f"{jsondoc.shown(text)} names no channel: write where the conversation happens first, "
                                     f"e.g. {jsondoc.shown('cli:' + text)}", _ALLOWED)
    if len(parts) == 2:
        parts.append("")
    if len(parts) != 3:
        raise ValidationError("key", f"{jsondoc.shown(text)} is not a conversation key", _ALLOWED)
    normal = conversation_key(parts[0], parts[1], parts[2])
    channel, chat, thread = normal.split(":")
    return ConversationKey(channel, chat, thread)


def normal_key(text: str) -> str:
    """The canonical string form of a key (``a:b`` becomes ``a:b:``); raises ``ValidationError``."""
    return str(parse_conversation_key(text))


def shown_key(text: str) -> str:
    """``ConversationKey.shown`` of a key in any form (``telegram:42:`` -> ``telegram:42``)."""
    return parse_conversation_key(text).shown


def key_or_chat(text: str) -> tuple[str | None, str | None]:
    """A conversation selector: a full key (``telegram:42`` -> ``("telegram:42:", None)``) or a
    plain chat id, Clawless's ``chatId`` (``"42"`` -> ``(None, "42")``: that chat on any channel or
    thread). Raises ``ValidationError`` naming ``chatId`` for anything else."""
    if isinstance(text, str) and ":" in text:
        return normal_key(text), None
    if not isinstance(text, str) or not _PART.match(text):
        raise ValidationError("chatId", f"{jsondoc.shown(text)} is neither a chat id nor a conversation key",
                              'a chat id (1-128 characters, no ":" or spaces) or ' + _ALLOWED)
    return None, text
