"""Claude.ai's data export (Settings > Privacy > Export data): its ``conversations.json``.

The file is a JSON array of conversations (``uuid``, ``name``, ``created_at``, ``updated_at`` as
ISO 8601, ``chat_messages``), each message ``{uuid, sender: human | assistant, text, content,
created_at, attachments, files}``, in the order the conversation shows them. Each ``human`` and
``assistant`` message joins ``claude:<uuid>`` as a user or assistant message at its time. Its text
is what ``content`` shows: the ``text`` blocks, adjacent ones run together as they are displayed
(a reply with citations is several blocks of one paragraph), a blank line where a tool use, tool
result or thinking block stood between them; an export without ``content`` gives the message's
``text``. Byte for byte either way.

When the conversation names its ``current_leaf_message_uuid`` and the messages their
``parent_message_uuid`` (as Claude.ai's API gives them), only the path from that leaf back to the
first message is the conversation shown; messages of other branches (a retried answer, an edited
question) are counted, not imported. Also counted: messages by other senders, ones with no text
(only a tool use, or only attachments) and empty ones. Attachments and files are named (their
``file_name``) in the message's ``metadata["claude"]``; their contents are not imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram.importers.base import Plan, a_list, an_object, fail, optional_text, timestamp
from engram.importers.chat_exports.common import (
    Conversations,
    Documents,
    lists_of,
    read_export,
    title_of,
)

KIND = "claude"
SHAPE = ('Claude.ai\'s conversations.json: [{"uuid", "name", "created_at", "chat_messages": [{"uuid", "sender", '
         '"text", "content": [{"type", "text"}], "created_at"}]}]')
_SENDERS = {"human": "user", "assistant": "assistant"}
_BRANCHES = "messages on other branches"
NOTES = {
    _BRANCHES: "answers retried and questions edited, which the conversation no longer shows",
    "messages without text": "only a tool use, thinking or attachments",
    "attachments and files": "their names are in the message's metadata.claude; their contents are not imported",
}


def looks_like(data: Any) -> bool:
    """Claude.ai's ``conversations.json``: a list of objects with a ``chat_messages`` list."""
    return lists_of(data, "chat_messages", list)


def read(text: str) -> Plan:
    """The plan of Claude.ai's ``conversations.json``; raises ``SnapshotError`` naming the JSON path
    of what is malformed (``[2].chat_messages[5].sender``), before anything is imported."""
    return read_documents([("", text)])


def read_documents(documents: Documents) -> Plan:
    """The plan of the export's conversation files, ``(file name, text)`` in order (its
    ``conversations.json``, or the shards a larger export is split into)."""
    return read_export(documents, KIND, SHAPE, NOTES, _conversation)


def _conversation(found: Conversations, item: Any, where: str) -> None:
    conversation = an_object(item, where, "a Claude.ai conversation object")
    if "chat_messages" not in conversation and "mapping" in conversation:
        raise fail(where, "holds a mapping: a ChatGPT export, not Claude.ai's", "--from chatgpt")
    uuid = optional_text(conversation.get("uuid"), f"{where}.uuid")
    if uuid is None:
        raise fail(f"{where}.uuid", "is missing", "the conversation's uuid")
    title = title_of(conversation.get("name"), f"{where}.name")
    started = timestamp(conversation.get("created_at"), f"{where}.created_at")
    if "chat_messages" not in conversation:
        raise fail(f"{where}.chat_messages", "is missing", "the conversation's list of messages")
    messages = a_list(conversation.get("chat_messages"), f"{where}.chat_messages", "the list of messages")
    if not found.start(conversation, where, uuid, "uuid", title, started):
        return
    places = [(f"{where}.chat_messages[{n}]", an_object(m, f"{where}.chat_messages[{n}]", "a message object"))
              for n, m in enumerate(messages)]
    shown = _shown(conversation, places, where)
    found.skip(_BRANCHES, len(places) - len(shown))
    for place, message in shown:
        _message(found, message, place)
    found.end()


def _shown(conversation: Mapping[str, Any], places: list[tuple[str, Mapping[str, Any]]],
           where: str) -> list[tuple[str, Mapping[str, Any]]]:
    """The messages the conversation shows, in order: the path back from its current leaf when the
    export names one and the messages their parents; else every message as listed."""
    leaf = optional_text(conversation.get("current_leaf_message_uuid"), f"{where}.current_leaf_message_uuid")
    by_uuid = {m.get("uuid"): (place, m) for place, m in places if isinstance(m.get("uuid"), str)}
    if leaf is None or leaf not in by_uuid or not any("parent_message_uuid" in m for _, m in places):
        return places
    path: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[str] = set()
    current: str | None = leaf
    while current is not None and current in by_uuid and current not in seen:
        seen.add(current)
        place, message = by_uuid[current]
        path.append((place, message))
        current = optional_text(message.get("parent_message_uuid"), f"{place}.parent_message_uuid")
    # A parent outside the list is the root Claude.ai starts from (00000000-0000-4000-8000-000000000000).
    path.reverse()
    return path


def _message(found: Conversations, message: Mapping[str, Any], where: str) -> None:
    sender = message.get("sender")
    if not isinstance(sender, str) or not sender:
        raise fail(f"{where}.sender", f"got {sender!r}"[:200], "human or assistant")
    at = found.time(message.get("created_at"), f"{where}.created_at")
    text = _text(message, where)
    names = _file_names(message, where)
    role = _SENDERS.get(sender)
    if role is None:
        found.skip(f"messages by {sender}")
        return
    if not text.strip():
        found.skip("messages without text" if names or message.get("content") else "empty messages")
        return
    provenance: dict[str, Any] = {"message": optional_text(message.get("uuid"), f"{where}.uuid")}
    if names:
        provenance["attachments"] = names
        found.skip("attachments and files", len(names))
    found.add(where, role, text, at, "created_at", {k: v for k, v in provenance.items() if v is not None})


def _text(message: Mapping[str, Any], where: str) -> str:
    """The text the message shows: its ``content``'s text blocks (adjacent ones run together, a
    blank line where another block stood between), else its ``text``."""
    blocks = a_list(message.get("content"), f"{where}.content", "a list of content blocks")
    if not blocks:
        text = message.get("text")
        if text is not None and not isinstance(text, str):
            raise fail(f"{where}.text", f"got {type(text).__name__}", "the message's text")
        return text or ""
    runs: list[str] = []
    joined = False  # the previous block was text: this one continues its run
    for k, value in enumerate(blocks):
        block = an_object(value, f"{where}.content[{k}]", "a content block {type, text}")
        kind = block.get("type")
        if not isinstance(kind, str) or not kind:
            raise fail(f"{where}.content[{k}].type", f"got {kind!r}"[:200], "text, tool_use, tool_result, thinking, ...")
        if kind != "text":
            joined = False
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.content[{k}].text", f"got {type(text).__name__}", "the block's text")
        if joined:
            runs[-1] += text
        else:
            runs.append(text)
        joined = True
    return "\n\n".join(run for run in runs if run.strip())


def _file_names(message: Mapping[str, Any], where: str) -> list[str]:
    """The names of the message's attachments (pasted or uploaded documents) and files (images)."""
    names: list[str] = []
    for name in ("attachments", "files"):
        for k, value in enumerate(a_list(message.get(name), f"{where}.{name}")):
            item = an_object(value, f"{where}.{name}[{k}]", "an object with its file_name")
            file_name = item.get("file_name")
            names.append(file_name if isinstance(file_name, str) and file_name else name[:-1])
    return names
