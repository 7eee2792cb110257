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
(only a tool use, or only files), empty ones, and each block left out of an imported message's
text: an artifact (a ``tool_use`` named ``artifacts``: the document or code Claude.ai showed beside
the reply), another tool use, a tool result, thinking.

Text pasted into a message (Claude.ai turns a long paste into an attachment) and a document's text
are in an attachment's ``extracted_content``: often the real content of the message. Each such
text follows what was typed, after a blank line, as a block a reader tells apart from the typing:
a line naming the attachment (``[attachment: notes.txt]``, ``[attachment]`` without a file name)
and the text, byte for byte, between two fences of backticks, one more than the longest run of
backticks in it (at least three), so that markdown inside cannot close it. A message with no typed
text (or only whitespace) is its attachments' blocks alone. Counted, not imported: attachments
without text (images, a document Claude.ai read nothing from), ``files`` (the export names them
and holds nothing else), and an attachment's text that would take its message past
``MAX_MESSAGE_CHARS`` or that no store can hold (a NUL character). Every attachment and file is
named (its ``file_name``) in the message's ``metadata["claude"]["attachments"]``.

Claude.ai's memory (its "Memory" setting) is in the export's ``memories.json``, beside
``conversations.json``: a list with one object per account, ``{"conversations_memory": text,
"project_memories": {project uuid: text}, "account_uuid"}``, each text the summary Claude.ai keeps
of the person (markdown, its sections under bold headings) and gives the model in every
conversation, or in every one of that project. It is what Claude.ai holds now, as custom instructions
are ChatGPT's: each non-empty text one ``core`` memory, byte for byte and whole (a section read
alone loses the heading that says whose it is), tagged ``claude`` and ``claude-memory`` (and
``project`` for a project's), the account and project in ``metadata["claude"]``. Its id is fixed by
the text, so a later export adds the summary as Claude.ai rewrote it, beside the earlier one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.importers.base import (
    Plan,
    Record,
    a_list,
    an_object,
    fail,
    optional_text,
    timestamp,
    wrong_type,
    wrong_value,
)
from engram.importers.chat_exports.common import (
    Conversations,
    Documents,
    lists_of,
    read_export,
    title_of,
)
from engram.model import MAX_MESSAGE_CHARS, Category, usable_text

KIND = "claude"
MEMORIES = "memories.json"  # Claude.ai's memory of the person, beside conversations.json
SHAPE = ('Claude.ai\'s conversations.json: [{"uuid", "name", "created_at", "chat_messages": [{"uuid", "sender", '
         '"text", "content": [{"type", "text"}], "created_at"}]}]')
_SENDERS = {"human": "user", "assistant": "assistant"}
_BRANCHES = "messages on other branches"
_NO_TEXT = "attachments without text"
_FILES = "files"
_TOO_LONG = "attachments' text too long for their message"
_UNUSABLE = "attachments' text engram cannot hold"
# Claude.ai's artifacts (the documents and code shown beside a reply) are tool uses named so.
_ARTIFACTS = "artifacts beside a message's text"
NOTES = {
    _BRANCHES: "answers retried and questions edited, which the conversation no longer shows",
    "messages without text": "only a tool use, thinking, or files and attachments without text",
    _NO_TEXT: "no extracted_content in the export (an image, a document Claude.ai read nothing from); "
              "named in the message's metadata.claude",
    _FILES: "images and uploads the export names and does not hold; named in the message's metadata.claude",
    _TOO_LONG: f"a message holds at most {MAX_MESSAGE_CHARS:,} characters; named in the message's metadata.claude",
    _UNUSABLE: "a NUL character or invalid Unicode; named in the message's metadata.claude",
    _ARTIFACTS: "documents and code Claude.ai showed beside its reply (content[].input); the reply's text is imported",
}


@dataclass(frozen=True, slots=True)
class _Attached:
    """One attachment or file of a message: its name for the metadata (``file_name``, else
    ``attachment`` / ``file``), the name its text's block shows (None: it has none), its text
    (None: the export holds none; a file never has one)."""

    name: str
    shown: str | None
    text: str | None
    file: bool


def looks_like(data: Any) -> bool:
    """Claude.ai's ``conversations.json``: a list of objects with a ``chat_messages`` list."""
    return lists_of(data, "chat_messages", list)


def read(text: str) -> Plan:
    """The plan of Claude.ai's ``conversations.json``; raises ``SnapshotError`` naming the JSON path
    of what is malformed (``[2].chat_messages[5].sender``), before anything is imported."""
    return read_documents([("", text)])


def read_documents(documents: Documents, memories: str | None = None) -> Plan:
    """The plan of the export's conversation files, ``(file name, text)`` in order (its
    ``conversations.json``, or the shards a larger export is split into), and of its
    ``memories.json`` text when it has one."""
    plan = read_export(documents, KIND, SHAPE, NOTES, _conversation)
    if memories is not None:
        plan.records.extend(_memories(memories))
    return plan


def _memories(text: str) -> list[Record]:
    """The ``core`` memories of ``memories.json`` (see the module's docstring); raises
    ``SnapshotError`` naming the place of what is malformed (``memories.json[0].project_memories``)."""
    try:
        data = jsondoc.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as exc:
        raise fail(f"{MEMORIES} line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})",
                   'Claude.ai\'s memories.json: [{"conversations_memory", "project_memories", "account_uuid"}]') from None
    accounts = data if isinstance(data, list) else [data]  # (one account's object alone, read the same)
    records: list[Record] = []
    for i, value in enumerate(accounts):
        where = f"{MEMORIES}[{i}]" if isinstance(data, list) else MEMORIES
        item = an_object(value, where, "an object {conversations_memory, project_memories, account_uuid}")
        account = optional_text(item.get("account_uuid"), f"{where}.account_uuid")
        texts = [(f"{where}.conversations_memory", item.get("conversations_memory"), None)]
        projects = item.get("project_memories")
        if projects is not None:
            texts += [(f"{where}.project_memories.{uuid}", said, uuid)
                      for uuid, said in an_object(projects, f"{where}.project_memories",
                                                  "an object {project uuid: text}").items()]
        for place, said, project in texts:
            if said is not None and not isinstance(said, str):
                raise wrong_type(place, said, "the text of Claude.ai's memory")
            if not said or not said.strip():
                continue
            provenance = {"memory": "project_memories" if project else "conversations_memory", "project": project,
                          "account": account}
            source_id = f"memory\0{account or ''}\0{project or ''}\0{said}"
            if any(r.source_id == source_id for r in records):
                continue  # (the same account listed twice)
            records.append(Record(
                # Core: Claude.ai gives it to the model in every conversation (of the project), as
                # engram gives its core memories. time_in_id=False: the id is fixed by the text.
                source_id=source_id, where=place, content=said, category=Category.CORE, type="learned",
                tags=("claude", "claude-memory", *(("project",) if project else ())), importance=0.7,
                metadata={KIND: {k: v for k, v in provenance.items() if v is not None}},
                time_in_id=False, fields={"content": ""},
                what="Claude.ai's memory" + (f" of project {project}" if project else "")))
    return records


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
        raise wrong_value(f"{where}.sender", sender, "human or assistant")
    at = found.time(message.get("created_at"), f"{where}.created_at")
    text, blocks_left_out = _text(message, where)
    attached = _attached(message, where)
    role = _SENDERS.get(sender)
    if role is None:
        found.skip(f"messages by {sender}")
        return
    content, left_out = _with_attachments(text, attached)
    if content is None:
        found.skip("messages without text" if attached or message.get("content") else "empty messages")
        return
    for reason in left_out + blocks_left_out:
        found.skip(reason)
    provenance: dict[str, Any] = {"message": optional_text(message.get("uuid"), f"{where}.uuid")}
    if attached:
        provenance["attachments"] = [a.name for a in attached]
    found.add(where, role, content, at, "created_at", {k: v for k, v in provenance.items() if v is not None})


def _text(message: Mapping[str, Any], where: str) -> tuple[str, list[str]]:
    """The text the message shows: its ``content``'s text blocks (adjacent ones run together, a
    blank line where another block stood between), else its ``text``; and why each other block is
    left out (an artifact, a tool use, thinking...), counted in the import's warning."""
    blocks = a_list(message.get("content"), f"{where}.content", "a list of content blocks")
    if not blocks:
        text = message.get("text")
        if text is not None and not isinstance(text, str):
            raise wrong_type(f"{where}.text", text, "the message's text")
        return text or "", []
    runs: list[str] = []
    left_out: list[str] = []
    joined = False  # the previous block was text: this one continues its run
    for k, value in enumerate(blocks):
        block = an_object(value, f"{where}.content[{k}]", "a content block {type, text}")
        kind = block.get("type")
        if not isinstance(kind, str) or not kind:
            raise wrong_value(f"{where}.content[{k}].type", kind, "text, tool_use, tool_result, thinking, ...")
        if kind != "text":
            left_out.append(_ARTIFACTS if kind == "tool_use" and block.get("name") == "artifacts" else
                            f"{kind} blocks beside a message's text")
            joined = False
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise wrong_type(f"{where}.content[{k}].text", text, "the block's text")
        if joined:
            runs[-1] += text
        else:
            runs.append(text)
        joined = True
    return "\n\n".join(run for run in runs if run.strip()), left_out


def _attached(message: Mapping[str, Any], where: str) -> list[_Attached]:
    """The message's attachments (pasted text, uploaded documents: their ``extracted_content``) and
    files (images, uploads: a name alone), in that order."""
    found: list[_Attached] = []
    for name in ("attachments", "files"):
        for k, value in enumerate(a_list(message.get(name), f"{where}.{name}")):
            place = f"{where}.{name}[{k}]"
            item = an_object(value, place, "an object with its file_name")
            file_name = item.get("file_name")
            named = file_name if isinstance(file_name, str) and file_name else None
            text = item.get("extracted_content") if name == "attachments" else None
            if text is not None and not isinstance(text, str):
                raise wrong_type(f"{place}.extracted_content", text, "the attachment's text")
            found.append(_Attached(named or name[:-1], named, text or None, name == "files"))
    return found


def _with_attachments(text: str, attached: list[_Attached]) -> tuple[str | None, list[str]]:
    """What was typed, then each attachment's text as a block of its own (see the module's
    docstring), or None when neither holds any text; and why each of the others is left out: an
    attachment without text, a file, or a text the message cannot hold (too long, or text no store
    can keep)."""
    parts = [text] if text.strip() else []
    size = len(text) if parts else 0
    left_out: list[str] = []
    for item in attached:
        if item.text is None or not item.text.strip():
            left_out.append(_FILES if item.file else _NO_TEXT)
            continue
        try:
            usable_text("extracted_content", item.text)
        except ValidationError:
            left_out.append(_UNUSABLE)
            continue
        block = _block(item.shown, item.text)
        added = len(block) + (2 if parts else 0)
        if size + added > MAX_MESSAGE_CHARS:
            left_out.append(_TOO_LONG)
            continue
        parts.append(block)
        size += added
    return ("\n\n".join(parts) if parts else None), left_out


def _block(name: str | None, text: str) -> str:
    """An attachment's text between fences no line of it can close, under a line naming it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    label = f"[attachment: {' '.join(name.split())}]" if name else "[attachment]"
    return f"{label}\n{fence}\n{text}\n{fence}"
