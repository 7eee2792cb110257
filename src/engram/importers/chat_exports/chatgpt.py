"""ChatGPT's data export (Settings > Data controls > Export data): its ``conversations.json``.

The file is a JSON array of conversations (``id`` or ``conversation_id``, ``title``,
``create_time``, ``mapping``, ``current_node``). A conversation is a tree: ``mapping`` holds every
node by id (``{id, message, parent, children}``), and regenerating an answer or editing a question
adds a branch beside the old one. ``current_node`` is the last message of the branch the person
last saw, so the conversation as shown is the path from it back to the root; only that path is
imported, and the messages of other branches are counted. A conversation whose ``current_node`` is
null (or absent) shows the branch last written to: the one ending at the latest message by
``create_time`` (a warning counts such conversations that had branches to choose from).

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
make). ChatGPT's tool instructions have it start every write with "User" (or the person's name) or
"Forget", so only "Forget" marks a removal: "User no longer ..." is an updated fact, and a fact may
begin with any name. Without ``saved_memories`` they are counted in a warning naming the option.

The export also holds what ChatGPT kept: each session opens with a hidden-from-view assistant
message of content type ``model_editable_context`` whose ``model_set_context`` is the list of saved
memories as ChatGPT gave them to the model then ("1. [2024-10-26]. User prefers Python for
scripting.\n\n2. [...]. ..."), each entry the written text byte for byte after its number and the
date it was written. The latest such list of the export (by its message's time) is better evidence
than the writes: a write made before it and absent from it was deleted or reworded in ChatGPT since,
and is not imported (counted in the warning); a write made after it stands; an entry of it that no
write of the export made (its conversation deleted, or ChatGPT merged two into one) is imported from
the list, dated by its entry's date (midnight UTC). An empty list says nothing (many newer exports
hold only empty ones, whatever ChatGPT keeps), and one in another shape is not used (counted in the warning).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
# A write to the memory tool asking it to forget ("Forget that the user ...", "Forget all ..."):
# ChatGPT's tool instructions have every write start with "User" (or the person's name) or
# "Forget" ("Forget that the user is shopping for an oven."), so no wider list of verbs is read as
# one ("Remove ..." may begin a fact about someone named so; "User no longer ..." is a fact).
_FORGET = re.compile(r"\s*forget\b", re.IGNORECASE)
# The message holding the list of saved memories as ChatGPT gave it to the model, and an entry's
# head in it: "1. [2024-10-26]. " at the start, then "\n\n2. [2024-10-28]. ", numbered from 1.
_MEMORY_LIST = "model_editable_context"
_LIST_ENTRY = re.compile(r"(?:\A|\n\n)(\d+)\. \[(\d{4}-\d{2}-\d{2})\]\. ")
OPTION = "--saved-memories"  # as engram import spells it (saved_memories=True from Python and over HTTP)
NOTES = {
    _BESIDE_TEXT: "the text is imported, their kinds named in its metadata.chatgpt.parts_left_out",
    _BRANCHES: "answers regenerated and questions edited, which the conversation no longer shows",
    "hidden messages": "context ChatGPT added, not shown in the conversation (custom instructions are imported as "
                       "core memories)",
    "tool messages": "search results, code output, generated images",
    "assistant messages to a tool": "code ChatGPT ran, searches, image prompts",
    "messages with only images or files": "no text to keep",
    f"{_MEMORY_LIST} messages": "the saved memories as ChatGPT gave them to the model (read for --saved-memories)",
}


def looks_like(data: Any) -> bool:
    """ChatGPT's ``conversations.json``: a list of objects with a ``mapping`` of message nodes."""
    return lists_of(data, "mapping", Mapping)


def read(text: str) -> Plan:
    """The plan of ChatGPT's ``conversations.json``; raises ``SnapshotError`` naming the JSON path
    of what is malformed (``[3].mapping.abc.message.content.parts[0]``), before anything is imported."""
    return read_documents([("", text)])


@dataclass
class _Written:
    """One distinct text written to the memory tool: its record (of the earliest write) and when
    it was last written (a text written again after ChatGPT's latest list cannot be in it)."""

    record: Record
    last: float | None


@dataclass
class _Listed:
    """ChatGPT's list of saved memories in one message: its entries (text, date written), when it
    was shown, and where."""

    entries: list[tuple[str, float]]
    at: float
    where: str
    conversation: str
    message: str | None


@dataclass
class _SavedMemories:
    """The export's writes to ChatGPT's memory tool and its latest list of saved memories, counted;
    made records when ``wanted``."""

    wanted: bool
    writes: int = 0  # facts written (repeats included)
    forgets: int = 0  # requests to forget
    forgotten_at: list[float | None] = field(default_factory=list)  # when each request to forget was made
    written: dict[str, _Written] = field(default_factory=dict)  # text -> its earliest write
    latest: _Listed | None = None  # the latest list of saved memories, read
    unread: int = 0  # lists in a shape not read
    absent: int = 0  # texts written before the latest list and absent from it (not imported)
    listed_only: int = 0  # entries of the latest list no write made (imported from it)

    def read_list(self, value: Any, at: float | None, where: str, conversation: str, message: str | None) -> None:
        """A ``model_set_context``: kept when it is the latest readable list so far; an empty one
        says nothing, one in another shape (or without a time to place it) is counted."""
        if value is None or value == "":
            return
        entries = _list_entries(value) if isinstance(value, str) else None
        if entries is None or at is None:
            self.unread += 1
            return
        if self.latest is None or at >= self.latest.at:
            self.latest = _Listed(entries, at, where, conversation, message)

    def records(self) -> list[Record]:
        """The saved memories to import, after the latest list: the writes it holds or that came
        after it, then its entries no write made."""
        kept: list[Record] = []
        listed = self.latest
        texts = {text for text, _ in listed.entries} if listed else set()
        stripped = {text.strip() for text in texts}
        matched: set[str] = set()
        for text, write in self.written.items():
            if listed is not None and text not in texts and text.strip() not in stripped \
                    and write.last is not None and write.last < listed.at:
                self.absent += 1  # deleted or reworded in ChatGPT before that list was shown
                continue
            matched.update((text, text.strip()))
            kept.append(write.record)
        if listed is not None:
            for text, written_on in listed.entries:
                if text in matched or text.strip() in matched:
                    continue
                matched.update((text, text.strip()))
                self.listed_only += 1
                metadata = {KIND: {k: v for k, v in {"saved_memory": "model_set_context",
                                                     "conversation": listed.conversation,
                                                     "message": listed.message}.items() if v is not None}}
                kept.append(_saved_record(text, listed.where, written_on, metadata))
        return kept if self.wanted else []

    def warning(self) -> str | None:
        """What the person learns of them: how many, and how to import them (or what was made)."""
        found = self.writes + self.forgets
        if not found and self.latest is None and not self.unread:
            return None
        forgets = (f", {self.forgets} of them {'a request' if self.forgets == 1 else 'requests'} to forget "
                   "(\"Forget that ...\")" if self.forgets else "")
        what = (f"{found} saved-memory {'record' if found == 1 else 'records'} found (ChatGPT's writes to its "
                f"memory tool, bio){forgets}")
        listed = self.latest
        day = datetime.fromtimestamp(listed.at, UTC).date().isoformat() if listed is not None else ""
        if listed is not None:
            count = len(listed.entries)
            what += (f"; ChatGPT's latest list of saved memories (model_set_context, {day}) holds {count} "
                     f"{'memory' if count == 1 else 'memories'}")
            if self.wanted:
                what += (f": {self.absent} written before it and absent from it "
                         f"{'is' if self.absent == 1 else 'are'} not imported (deleted or reworded in ChatGPT since), "
                         f"{self.listed_only} in it that no write of the export made "
                         f"{'is' if self.listed_only == 1 else 'are'} imported from it")
                after = sum(1 for at in self.forgotten_at if at is None or at >= listed.at)
                if after:
                    # Such a request may have removed one of the list's memories: which one, ChatGPT guessed.
                    what += (f", {after} {'request' if after == 1 else 'requests'} to forget made after it "
                             "(the memory each meant may be imported still: review them)")
        if self.unread:
            what += (f"; {self.unread} {'list' if self.unread == 1 else 'lists'} of saved memories "
                     "(model_set_context) in a shape engram does not read, not used")
        since = f"ChatGPT may have changed or deleted some since {day}".rstrip()
        if self.wanted:
            return (f"{what}; each distinct text is a core memory tagged saved-memory"
                    + (", a request to forget is not (which memory it meant is not engram's to guess)" if self.forgets
                       else "")
                    + f". {since} and the export does not say: review them with engram list --tag saved-memory")
        return (f"{what}; not imported, since {since} and the export does not say: import them as memories with "
                f"engram import {OPTION} (saved_memories=True in Python, \"saved_memories\": true over HTTP)")


def _list_entries(text: str) -> list[tuple[str, float]] | None:
    """The entries of a ``model_set_context`` ("1. [2024-10-26]. text\n\n2. [...]. text"): (text,
    its date at midnight UTC), numbered from 1 in order (a head out of order is part of the text
    before it); None when the text does not open with entry 1, an entry is empty or a date is none."""
    heads: list[re.Match[str]] = []
    for head in _LIST_ENTRY.finditer(text):
        if int(head.group(1)) == len(heads) + 1:
            heads.append(head)
    if not heads or heads[0].start() != 0:
        return None
    entries: list[tuple[str, float]] = []
    for k, head in enumerate(heads):
        body = text[head.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        try:
            day = datetime.strptime(head.group(2), "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return None
        if not body.strip():
            return None
        entries.append((body, day.timestamp()))
    return entries


def read_documents(documents: Documents, *, saved_memories: bool = False) -> Plan:
    """The plan of the export's conversation files, ``(file name, text)`` in order (its
    ``conversations.json``, or the shards a larger export is split into); ``saved_memories`` makes
    the writes to ChatGPT's memory tool memories (else they are counted in a warning)."""
    tally = _SavedMemories(saved_memories)
    branches = _Branches()
    plan = read_export(documents, KIND, SHAPE, NOTES, functools.partial(_conversation, saved=tally, branches=branches))
    chosen = branches.warning()
    if chosen:
        plan.warnings.append(chosen)
    # Made once the whole export is read: which list of saved memories is the latest is known only then.
    plan.records += tally.records()
    note = tally.warning()
    if note:
        plan.warnings.append(note)
    return plan


@dataclass
class _Branches:
    """How many conversations of the export gave no ``current_node`` and had branches to choose from."""

    chosen: int = 0

    def warning(self) -> str | None:
        if not self.chosen:
            return None
        n = self.chosen
        return (f"{n} conversation{'' if n == 1 else 's'} without current_node (null or absent): "
                f"{'its' if n == 1 else 'each'} branch ending at the latest message (by create_time) imported, "
                "as ChatGPT shows the branch last written to; the other branches are counted as messages on other branches")


def _conversation(found: Conversations, item: Any, where: str, saved: _SavedMemories, branches: _Branches) -> None:
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
    path = _shown_path(conversation, mapping, where, branches)
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


def _shown_path(conversation: Mapping[str, Any], mapping: Mapping[str, Any], where: str,
                branches: _Branches) -> list[str]:
    """The node ids from the root to ``current_node``: the branch the person last saw. Without one
    (``null`` or absent, as some exports give it), the branch ending at the latest message
    (``_latest_leaf``)."""
    if not mapping:
        return []
    current = optional_text(conversation.get("current_node"), f"{where}.current_node")
    if current is None:
        current = _latest_leaf(mapping, where, branches)
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


def _latest_leaf(mapping: Mapping[str, Any], where: str, branches: _Branches) -> str:
    """The last node of the branch a conversation without ``current_node`` shows: of the nodes no
    other node continues (its leaves), the one whose message is the latest (``create_time``), the
    later in ``mapping`` on a tie or when none has a time. ChatGPT shows the branch last written to
    (a regenerated answer or an edited question is the newest message of its branch), so that is
    the branch a person reopening the conversation sees. Counted in ``branches`` when there was a
    choice (more than one leaf), for the import's warning."""
    # (A parent that is no id is named by the walk from the leaf chosen, as with current_node given.)
    parents = {node["parent"] for node in mapping.values() if isinstance(node, Mapping) and isinstance(node.get("parent"), str)}
    leaves = [node_id for node_id in mapping if node_id not in parents]
    if not leaves:  # every node continued by another: a cycle, which the walk from any node names
        return next(reversed(list(mapping)))
    if len(leaves) > 1:
        branches.chosen += 1

    def written(k: int) -> tuple[float, int]:
        node = an_object(mapping[leaves[k]], member(f"{where}.mapping", leaves[k]),
                         "a node object {id, message, parent, children}")
        message = node.get("message")
        at = (timestamp(message.get("create_time"), f"{member(f'{where}.mapping', leaves[k])}.message.create_time")
              if isinstance(message, Mapping) else None)
        return (at if at is not None else -math.inf, k)

    return leaves[max(range(len(leaves)), key=written)]


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
    if content_type == _MEMORY_LIST:  # read for the saved memories, then counted as the message it is
        saved.read_list(content.get("model_set_context"), at, f"{where}.content.model_set_context",
                        found.conversation_id, optional_text(message.get("id"), f"{where}.id"))
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
        saved.forgotten_at.append(at)
        return True
    saved.writes += 1
    provenance = {"saved_memory": _MEMORY_TOOL, "conversation": found.conversation_id,
                  "message": optional_text(message.get("id"), f"{where}.id")}
    metadata = {KIND: {k: v for k, v in provenance.items() if v is not None}}
    earlier = saved.written.get(text)
    if earlier is None:
        saved.written[text] = _Written(_saved_record(text, place, at, metadata), at)
        return True
    if at is not None:
        earlier.last = at if earlier.last is None else max(earlier.last, at)
        record = earlier.record
        if record.created_at is None or at < record.created_at:
            # The earliest write dates it, and names where it was made (an export lists the newest first).
            earlier.record = _saved_record(text, place, at, metadata)
    return True


def _saved_record(text: str, where: str, at: float | None, metadata: dict[str, Any]) -> Record:
    # Core, as custom instructions are: ChatGPT put every saved memory in every conversation until
    # it was removed, which is what a core memory is to an agent. Importance a little below theirs:
    # ChatGPT chose these words, the person wrote those. time_in_id=False: the id is fixed by the
    # text alone, so a later export, whose earliest copy may be another (or its list), finds what this one made.
    return Record(
        source_id=f"saved-memory\0{text}", where=where, content=text, category=Category.CORE, type="learned",
        tags=("chatgpt", "saved-memory"), importance=0.7, metadata=metadata,
        created_at=at, time_in_id=False, fields={"content": ""}, what="a ChatGPT saved memory")


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
