"""ChatGPT's data export (Settings > Data controls > Export data): its ``conversations.json``.

The file is a JSON array of conversations (``id`` or ``conversation_id``, ``title``,
``create_time``, ``mapping``, ``current_node``). A conversation is a tree: ``mapping`` holds every
node by id (``{id, message, parent, children}``), and regenerating an answer or editing a question
adds a branch beside the old one. ``current_node`` is the last message of the branch the person
last saw, so the conversation as shown is the path from it back to the root; only that path is
imported, and the messages of other branches are counted.

On the path, each message (``author.role``, ``create_time``, ``content.content_type`` and
``parts``, ``metadata``, ``recipient``) that the person saw as theirs or ChatGPT's answer joins
``chatgpt:<id>``: ``user`` and ``assistant`` messages of content type ``text`` or
``multimodal_text``, their text parts joined by a line break, byte for byte (a voice message's
``audio_transcription`` part is its text). Counted, not imported: messages hidden from the
conversation (``metadata.is_visually_hidden_from_conversation``: custom instructions, context
ChatGPT adds), ``system`` and ``tool`` messages (search results, code output, generated images),
assistant messages addressed to a tool (``recipient`` other than ``all``: code it ran, searches,
image prompts), other content types (``code``, ``thoughts``, ``reasoning_recap``, ...), messages
holding only images or files, and empty ones. Images beside text leave the text, their kinds named
in the message's ``metadata["chatgpt"]["parts_left_out"]``; the assistant's ``model_slug`` is kept
as ``metadata["chatgpt"]["model"]``.

Custom instructions are no conversation message: ChatGPT puts them, hidden, at the start of every
conversation made while they were set (content type ``user_editable_context``), and the person's
own words are in its ``metadata.user_context_message_data``: ``about_user_message`` (what they told
ChatGPT about themselves, "I live in Porto") and ``about_model_message`` (how they want answers).
What the person said of themselves is what a memory holds, so each distinct text becomes one
``core`` memory, once for the whole export however many conversations repeat it (its id is fixed by
the text alone, so a later export adds only a text changed since, beside the earlier one), tagged
``custom-instructions`` and ``about-me`` or ``how-to-respond``, dated by the earliest conversation
that holds it, the field and that conversation's id in ``metadata["chatgpt"]``. The content's
``user_profile`` and ``user_instructions`` are ChatGPT's prompt wrapped around the same words: not
read. An instructions message without that data is counted with the hidden messages.

Saved memories ("Memory" in ChatGPT's settings) have no file of their own: the export holds them
only as what ChatGPT wrote to its ``bio`` tool, assistant messages with ``recipient`` ``bio``
("User prefers Python for scripting.", answered by a ``tool`` message "Model set context updated.").
They are the most memory-like records of the export, but a record of writes, not of what ChatGPT
keeps now: the person may have changed or deleted one since, and the export does not say. So they
are imported only when asked (``saved_memories``): each distinct text one ``core`` memory, byte for
byte, once for the whole export (its id fixed by the text alone, as custom instructions' are),
dated by its earliest write, tagged ``chatgpt`` and ``saved-memory``, the conversation and message
ids of that write in ``metadata["chatgpt"]``. A write that asks to forget ("Forget that the user
...") is no fact: counted, not imported (which memory it meant is ChatGPT's guess, not engram's to
make). Without ``saved_memories`` they are counted in a warning naming the option.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engram import jsondoc
from engram.importers.base import (
    Plan,
    Record,
    a_list,
    an_object,
    fail,
    member,
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
from engram.model import Category

KIND = "chatgpt"
SHAPE = ('ChatGPT\'s conversations.json: [{"id", "title", "create_time", "mapping": {node id: {"message": '
         '{"author": {"role"}, "create_time", "content": {"content_type", "parts"}}, "parent"}}, "current_node"}]')
ROLES = ("user", "assistant", "system", "tool")
_TEXT_TYPES = ("text", "multimodal_text")
_BRANCHES = "messages on other branches"
_BESIDE_TEXT = "images, files or audio beside a message's text"
_INSTRUCTIONS = "user_editable_context"
# The custom-instructions fields holding the person's own words, with the tag each memory gets.
_INSTRUCTION_FIELDS = {"about_user_message": "about-me", "about_model_message": "how-to-respond"}
# ChatGPT's memory tool: an assistant message addressed to it is a saved memory being written.
_MEMORY_TOOL = "bio"
# A write to the memory tool asking it to forget ("Forget that the user ...", "Forget all ..."),
# as ChatGPT phrases a removal in real exports.
_FORGET = re.compile(r"\s*forget\b", re.IGNORECASE)
OPTION = "--saved-memories"  # as engram import spells it (saved_memories=True from Python and over HTTP)
NOTES = {
    _BESIDE_TEXT: "the text is imported, their kinds named in its metadata.chatgpt.parts_left_out",
    _BRANCHES: "answers regenerated and questions edited, which the conversation no longer shows",
    "hidden messages": "context ChatGPT added, not shown in the conversation (custom instructions are imported as "
                       "core memories)",
    "tool messages": "search results, code output, generated images",
    "assistant messages to a tool": "code ChatGPT ran, searches, image prompts",
    "messages with only images or files": "no text to keep",
}


def looks_like(data: Any) -> bool:
    """ChatGPT's ``conversations.json``: a list of objects with a ``mapping`` of message nodes."""
    return lists_of(data, "mapping", Mapping)


def read(text: str) -> Plan:
    """The plan of ChatGPT's ``conversations.json``; raises ``SnapshotError`` naming the JSON path
    of what is malformed (``[3].mapping.abc.message.content.parts[0]``), before anything is imported."""
    return read_documents([("", text)])


@dataclass
class _SavedMemories:
    """The export's writes to ChatGPT's memory tool, counted; made records when ``wanted``."""

    wanted: bool
    writes: int = 0  # facts written (repeats included)
    forgets: int = 0  # requests to forget
    made: dict[str, int] = field(default_factory=dict)  # text -> its record's place in the plan

    def warning(self) -> str | None:
        """What the person learns of them: how many, and how to import them (or what was made)."""
        found = self.writes + self.forgets
        if not found:
            return None
        forgets = (f", {self.forgets} of them {'a request' if self.forgets == 1 else 'requests'} to forget "
                   "(\"Forget that ...\")" if self.forgets else "")
        what = (f"{found} saved-memory {'record' if found == 1 else 'records'} found (ChatGPT's writes to its "
                f"memory tool, bio){forgets}")
        if self.wanted:
            return (f"{what}; each distinct text is a core memory tagged saved-memory"
                    + (", a request to forget is not (which memory it meant is not engram's to guess)" if self.forgets
                       else "")
                    + ". ChatGPT may have changed or deleted some since and the export does not say: review them with "
                    "engram list --tag saved-memory")
        return (f"{what}; not imported, since ChatGPT may have changed or deleted some since and the export does "
                f"not say: import them as memories with engram import {OPTION} (saved_memories=True in Python, "
                "\"saved_memories\": true over HTTP)")


def read_documents(documents: Documents, *, saved_memories: bool = False) -> Plan:
    """The plan of the export's conversation files, ``(file name, text)`` in order (its
    ``conversations.json``, or the shards a larger export is split into); ``saved_memories`` makes
    the writes to ChatGPT's memory tool memories (else they are counted in a warning)."""
    tally = _SavedMemories(saved_memories)
    plan = read_export(documents, KIND, SHAPE, NOTES, functools.partial(_conversation, saved=tally))
    note = tally.warning()
    if note:
        plan.warnings.append(note)
    return plan


def _conversation(found: Conversations, item: Any, where: str, saved: _SavedMemories) -> None:
    conversation = an_object(item, where, "a ChatGPT conversation object")
    if "mapping" not in conversation and "chat_messages" in conversation:
        raise fail(where, "holds chat_messages: a Claude.ai export, not ChatGPT's", "--from claude")
    id_field = "id" if conversation.get("id") is not None else "conversation_id"
    conversation_id = optional_text(conversation.get(id_field), f"{where}.{id_field}")
    if conversation_id is None:
        raise fail(f"{where}.id", "is missing", "the conversation's id (id or conversation_id)")
    title = title_of(conversation.get("title"), f"{where}.title")
    mapping = an_object(conversation.get("mapping"), f"{where}.mapping", "the conversation's message nodes by id")
    started = timestamp(conversation.get("create_time"), f"{where}.create_time")
    if not found.start(conversation, where, conversation_id, id_field, title, started):
        return
    path = _shown_path(conversation, mapping, where)
    on_path = set(path)
    # The other branches' messages: counted, not read (they are not what the person sees).
    found.skip(_BRANCHES, sum(1 for node_id, node in mapping.items()
                              if node_id not in on_path and isinstance(node, Mapping) and node.get("message")))
    for node_id in path:
        node_where = member(f"{where}.mapping", node_id)
        message = mapping[node_id].get("message")
        if message is None:
            continue  # the root placeholder a conversation starts from
        _message(found, an_object(message, f"{node_where}.message", "a ChatGPT message object"),
                 f"{node_where}.message", saved)
    found.end()


def _shown_path(conversation: Mapping[str, Any], mapping: Mapping[str, Any], where: str) -> list[str]:
    """The node ids from the root to ``current_node``: the branch the person last saw."""
    if not mapping:
        return []
    current = optional_text(conversation.get("current_node"), f"{where}.current_node")
    if current is None:
        raise fail(f"{where}.current_node", "is missing", "the id of the conversation's last node in mapping")
    if current not in mapping:
        raise fail(f"{where}.current_node", f"{jsondoc.shown(current)} is no node of mapping", "the id of a node in mapping")
    path: list[str] = []
    seen: set[str] = set()
    node_id: str | None = current
    while node_id is not None:
        node_where = member(f"{where}.mapping", node_id)
        node = an_object(mapping[node_id], node_where, "a node object {id, message, parent, children}")
        seen.add(node_id)
        path.append(node_id)
        parent = optional_text(node.get("parent"), f"{node_where}.parent")
        if parent is not None and parent not in mapping:
            raise fail(f"{node_where}.parent", f"{jsondoc.shown(parent)} is no node of mapping",
                       "the id of a node in mapping, or null")
        if parent in seen:
            raise fail(f"{node_where}.parent", f"{jsondoc.shown(parent)} leads back to this node (a cycle)",
                       "the id of the node before it")
        node_id = parent
    return path[::-1]


def _message(found: Conversations, message: Mapping[str, Any], where: str, saved: _SavedMemories) -> None:
    author = an_object(message.get("author"), f"{where}.author", "the author object {role, name, metadata}")
    role = author.get("role")
    if not isinstance(role, str) or not role:
        raise wrong_value(f"{where}.author.role", role, ", ".join(ROLES))
    content = an_object(message.get("content"), f"{where}.content", "the content object {content_type, parts}")
    content_type = content.get("content_type")
    if not isinstance(content_type, str) or not content_type:
        raise wrong_value(f"{where}.content.content_type", content_type, "text, multimodal_text, code, ...")
    own = message.get("metadata")
    if own is not None and not isinstance(own, Mapping):
        raise wrong_type(f"{where}.metadata", own, "an object")
    recipient = message.get("recipient")
    if recipient is not None and not isinstance(recipient, str):
        raise wrong_type(f"{where}.recipient", recipient, "the name the message is addressed to (all)")
    # The time is read for every message on the path: a skipped one still dates those after it.
    at = found.time(message.get("create_time"), f"{where}.create_time")
    if content_type == _INSTRUCTIONS and own and _custom_instructions(found, own, where):
        return
    if own and own.get("is_visually_hidden_from_conversation"):
        found.skip("hidden messages")
        return
    if role in ("system", "tool"):
        found.skip(f"{role} messages")
        return
    if role not in ("user", "assistant"):
        found.skip(f"messages by {role}")
        return
    if role == "assistant" and recipient == _MEMORY_TOOL and content_type in _TEXT_TYPES \
            and _saved_memory(found, message, content, at, where, saved):
        return
    if role == "assistant" and recipient not in (None, "all"):
        found.skip("assistant messages to a tool")
        return
    if content_type not in _TEXT_TYPES:
        found.skip(f"{content_type} messages")
        return
    texts, others = _parts(content.get("parts"), f"{where}.content.parts")
    text = "\n".join(texts)
    if not text.strip():
        found.skip("messages with only images or files" if others else "empty messages")
        return
    provenance: dict[str, Any] = {"message": optional_text(message.get("id"), f"{where}.id")}
    if others:
        provenance["parts_left_out"] = others
        found.skip(_BESIDE_TEXT)
    model = own.get("model_slug") if own else None
    if role == "assistant" and isinstance(model, str) and model:
        provenance["model"] = model
    found.add(where, role, text, at, "create_time", {k: v for k, v in provenance.items() if v is not None})


def _custom_instructions(found: Conversations, own: Mapping[str, Any], where: str) -> bool:
    """The person's custom instructions as core memories (one per distinct text of the export);
    False when the message holds none of their words (it is then counted as hidden)."""
    data = own.get("user_context_message_data")
    if data is None:
        return False
    data = an_object(data, f"{where}.metadata.user_context_message_data", "an object {about_user_message, ...}")
    made = False
    for name, tag in _INSTRUCTION_FIELDS.items():
        text = data.get(name)
        place = f"{where}.metadata.user_context_message_data.{name}"
        if text is not None and not isinstance(text, str):
            raise wrong_type(place, text, "the text the person wrote")
        if not text or not text.strip():
            continue
        made = True
        source_id = f"custom-instructions\0{name}\0{text}"
        earlier = next((i for i, r in enumerate(found.plan.records) if r.source_id == source_id), None)
        if earlier is not None:
            record = found.plan.records[earlier]
            if found.started is not None and (record.created_at is None or found.started < record.created_at):
                # The earliest conversation holding the text dates it (an export lists the newest first).
                found.plan.records[earlier] = dataclasses.replace(
                    record, created_at=found.started,
                    metadata={KIND: {**record.metadata[KIND], "conversation": found.conversation_id}})
            continue
        found.plan.records.append(Record(
            source_id=source_id, where=place, content=text, category=Category.CORE, type="learned",
            tags=("chatgpt", "custom-instructions", tag), importance=0.8,
            metadata={KIND: {"custom_instructions": name, "conversation": found.conversation_id}},
            created_at=found.started, time_in_id=False, fields={"content": ""},
            what=f"ChatGPT's custom instructions ({name})"))
    return made


def _saved_memory(found: Conversations, message: Mapping[str, Any], content: Mapping[str, Any], at: float | None,
                  where: str, saved: _SavedMemories) -> bool:
    """A write to ChatGPT's memory tool: counted, and with ``saved.wanted`` a ``core`` memory (one
    per distinct text of the export, dated by its earliest write); False when it holds no text (it
    is then counted with the other messages to a tool)."""
    place = f"{where}.content.parts"
    texts, _ = _parts(content.get("parts"), place)
    text = "\n".join(texts)
    if not text.strip():
        return False
    if _FORGET.match(text):
        saved.forgets += 1
        return True
    saved.writes += 1
    if not saved.wanted:
        return True
    provenance = {"saved_memory": _MEMORY_TOOL, "conversation": found.conversation_id,
                  "message": optional_text(message.get("id"), f"{where}.id")}
    metadata = {KIND: {k: v for k, v in provenance.items() if v is not None}}
    earlier = saved.made.get(text)
    if earlier is not None:
        record = found.plan.records[earlier]
        if at is not None and (record.created_at is None or at < record.created_at):
            # The earliest write dates it, and names where it was made (an export lists the newest first).
            found.plan.records[earlier] = dataclasses.replace(record, where=place, created_at=at, metadata=metadata)
        return True
    saved.made[text] = len(found.plan.records)
    # Core, as custom instructions are: ChatGPT put every saved memory in every conversation until
    # it was removed, which is what a core memory is to an agent. Importance a little below theirs:
    # ChatGPT chose these words, the person wrote those. time_in_id=False: the id is fixed by the
    # text alone, so a later export, whose earliest copy may be another, finds what this one made.
    found.plan.records.append(Record(
        source_id=f"saved-memory\0{text}", where=place, content=text, category=Category.CORE, type="learned",
        tags=("chatgpt", "saved-memory"), importance=0.7, metadata=metadata,
        created_at=at, time_in_id=False, fields={"content": ""}, what="a ChatGPT saved memory"))
    return True


def _parts(value: Any, where: str) -> tuple[list[str], list[str]]:
    """(the text parts, the content types of the others: images, files, audio)."""
    texts: list[str] = []
    others: list[str] = []
    for k, part in enumerate(a_list(value, where, "a list of text parts (and objects for images)")):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping):
            kind = part.get("content_type")
            if kind == "audio_transcription" and isinstance(part.get("text"), str):
                texts.append(part["text"])  # what was said in a voice conversation, as ChatGPT shows it
            else:
                others.append(kind if isinstance(kind, str) and kind else "object")
        else:
            raise wrong_type(f"{where}[{k}]", part, "text, or an object (an image, a file)")
    return texts, others
