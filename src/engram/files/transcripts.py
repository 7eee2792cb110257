"""Session transcripts (ClawCode): a conversation as markdown, and its turns as memories.

The file format is ClawCode's::

    # Session Transcript: sess_123
    Started: 2026-02-09T10:00:00Z

    ## Turn 1 (10:00:05)
    **User**: What programming languages should I use for my project?

    **Agent**: Based on your requirements, I recommend ...

    [Indexed: What programming languages should I use for my project?]

A turn is a user message and the assistant text that answered it (tool traffic is left out).
Indexing stores each substantive turn, and not greetings or acknowledgements, as a
``conversation`` memory through ``Engram.remember``, tagged ``transcript`` and
``session:<id>``, with the session and the turn's time in its metadata. Its key is
``transcript:<session>:<turn>``, the session spelt as users write it (``cli:trip``, not the stored
``cli:trip:``: ``turn_session``) however it was given, so ``history transcript cli:trip --index``
and automatic indexing (which has the stored key) store one memory per turn. Indexing the same
transcript twice changes nothing (a turn an earlier version stored under the other spelling,
``transcript:cli:trip::1``, is updated where it is, and a second memory of it forgotten); a turn
already indexed keeps its number after compaction or trimming discarded the turns before it, and
a new turn is numbered past every turn already indexed, so it never overwrites another's memory.
A turn is known by its identity (``identities``: its time, a digest of the user's words, and how
many turns before it have both), kept in its memory's metadata (``at``, ``asked``, ``order``); a
memory an earlier version made, without them, is the first turn of its creation time.
A ``[Memory context]`` block an agent prepended to a user message is left out of the turn.

Transcripts belong to an agent, like the conversations they show: agent ``alice``'s transcript of
``telegram:42`` is ``<transcripts_dir>/alice/telegram_42.md``, so two agents using the same key
never overwrite each other's. The agent's folder is its name as ``disk_names.portable`` writes it
(``Alice``'s is ``!alice/``, ``adk:app:u1``'s ``adk+app+u1/``), so no two agents share one on a
case-insensitive file system and Windows takes every one; a folder an earlier version named as
it is (``Alice/``) is moved there when the agent's next transcript is written.

The file name is injective in the conversation, and no two are one name on a case-insensitive
file system: a key (or a session id) whose parts are plain (lowercase letters, digits, ``.`` and
``-``, starting with a letter or digit) is named by its parts joined with ``_`` (an empty thread
left out, so ``telegram:42`` and ``telegram:42:`` are one file), unless Windows keeps that name
for a device (``con``, ``nul.x``); anything else, a capital included, is named by
its sanitised text, ``__`` and 12 hex digits of the SHA-256 of the exact key (``web:a/b`` and
``web:a_b`` are ``web_a_b__….md`` with two different digests, ``web:Abc`` is ``web_Abc__….md``
beside ``web:abc``'s ``web_abc.md``). A plain name never holds ``__``, so the two kinds never meet.

Transcripts written by earlier versions where this one names them otherwise are left as they are
and no longer rewritten: those at the top of the folder (shared by every agent), and those of a
key with a capital, once named by its parts (``web_Abc.md``, now ``web_Abc__….md``). Each is the
conversation as it was when last written; ``engram history transcript`` writes it again under
its current name from the stored history.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import queue
import re
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import text
from engram.disk_names import portable, settle, windows_refuses
from engram.errors import EngramError, NotFoundError, StorageError, ValidationError
from engram.history.base import DEFAULT_AGENT
from engram.history.keys import parse_conversation_key
from engram.model import Memory, Message, Role
from engram.temporal.instants import iso

if TYPE_CHECKING:
    from engram.engine import Engram

log = logging.getLogger("engram.transcripts")

# Words that make up greetings, thanks and acknowledgements; a turn made only of these (and
# stopwords) carries nothing worth remembering.
_TRIVIAL = frozenset(
    """hi hello hey hiya yo morning evening afternoon good thanks thank thx ty cheers ok okay k kk
    sure yes yeah yep yup no nope nah great cool nice awesome perfect fine got understood right
    bye goodbye later see welcome np problem alright gotcha sounds noted done lol haha please""".split()
)
MIN_SUBSTANTIVE_WORDS = 3
IMPORTANCE_WORDS = 20  # distinct meaningful words that make a turn's importance 1.0
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]*$")  # a part named as it is: no "_", never "." first
MAX_PLAIN_NAME = 120  # characters of a file name without a digest (a key can be 386)
DIGEST_CHARS = 12
_PAGE = 500  # memories listed at a time
# ``index_and_write``'s phases, as its ``progress`` hears them: the turns looked at, then the file.
INDEXING = "indexing turns"
WRITING = "writing the transcript"
WORKER_CHECK_S = 0.5  # how often an undo waiting on the turn indexer checks that its worker still runs


@dataclass(frozen=True, slots=True)
class Turn:
    number: int
    user: str
    agent: str
    at: float


def turns(messages: Sequence[Message]) -> list[Turn]:
    """The turns of a conversation, numbered from 1; an unanswered last question is a turn too.
    The user's side is their words, without a ``[Memory context]`` block an agent prepended."""
    out: list[Turn] = []
    user: Message | None = None
    answers: list[str] = []
    for message in [*messages, None]:
        if message is None or message.role is Role.USER:
            if user is not None:
                # What the user said: a [Memory context] block the agent prepended is not theirs.
                out.append(Turn(len(out) + 1, text.strip_memory_context(user.content), "\n\n".join(answers),
                                user.created_at))
            user, answers = message, []
        elif message.role is Role.ASSISTANT and message.content.strip() and user is not None:
            answers.append(message.content.strip())
    return out


def is_substantive(turn: Turn) -> bool:
    """Whether a turn says something worth remembering: not only greetings or acknowledgements."""
    user_words = [w for w in text.words(turn.user) if w not in text.STOPWORDS and w not in _TRIVIAL]
    agent_words = [w for w in text.words(turn.agent) if w not in text.STOPWORDS and w not in _TRIVIAL]
    return len(user_words) >= MIN_SUBSTANTIVE_WORDS or (bool(user_words) and len(agent_words) >= MIN_SUBSTANTIVE_WORDS)


def importance(turn: Turn) -> float:
    """How much a turn says, 0..1: distinct meaningful words of both sides over 20 (greetings and
    acknowledgements are 0). ClawCode's ``importance_threshold`` compares against this."""
    if not is_substantive(turn):
        return 0.0
    meaningful = {w for w in text.words(f"{turn.user} {turn.agent}") if w not in text.STOPWORDS and w not in _TRIVIAL}
    return min(1.0, len(meaningful) / IMPORTANCE_WORDS)


def label(turn: Turn, limit: int = 80) -> str:
    """The ``[Indexed: …]`` label: the user's words, shortened."""
    words = " ".join(turn.user.split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


def render(session: str, messages: Sequence[Message], indexed: dict[int, str] | None = None) -> str:
    """The transcript markdown; ``indexed`` maps turn numbers to their ``[Indexed: …]`` labels.
    The header names the session as users write it (``turn_session``): automatic indexing has the
    stored key (``cli:sess_123:``), ``history transcript`` the key as typed, and both write one file."""
    all_turns = turns(messages)
    out = [f"# Session Transcript: {turn_session(session)}"]
    if messages:  # a conversation with no messages (yet, or compacted away) has no start to state
        out.append(f"Started: {iso(messages[0].created_at)}")
    out.append("")
    for turn in all_turns:
        clock = dt.datetime.fromtimestamp(turn.at, dt.UTC).strftime("%H:%M:%S")
        out += [f"## Turn {turn.number} ({clock})", f"**User**: {turn.user}", ""]
        if turn.agent:
            out += [f"**Agent**: {turn.agent}", ""]
        if indexed and turn.number in indexed:
            out += [f"[Indexed: {indexed[turn.number]}]", ""]
    return "\n".join(out).rstrip() + "\n"


def file_name(session: str) -> str:
    """The transcript's file name (without ``.md``) for a conversation key or session id, one
    name per conversation (see the module docstring)."""
    exact = session
    try:
        key = parse_conversation_key(session)
    except ValidationError:
        parts = [session]
    else:
        exact = str(key)
        parts = [part for part in (key.channel, key.chat, key.thread) if part]
    plain = "_".join(parts)
    # No capital in a plain name: ``web_Abc`` and ``web_abc`` would be one file on a
    # case-insensitive file system. The digest, of the exact key, tells such keys apart.
    if (all(_PLAIN.match(part) for part in parts) and len(plain) <= MAX_PLAIN_NAME and plain == plain.lower()
            and not windows_refuses(f"{plain}.md")):
        return plain
    digest = hashlib.sha256(exact.encode("utf-8")).hexdigest()[:DIGEST_CHARS]
    readable = _SAFE.sub("_", exact)[:80].strip("._") or "session"
    if windows_refuses(f"{readable}__{digest}.md"):
        readable = f"_{readable}"  # a plain name never starts with "_"; the digest keeps it apart
    return f"{readable}__{digest}"


def transcript_path(folder: Path, session: str, *, agent: str) -> Path:
    """``folder/<agent>/<name>.md``: ``agent``'s transcript of the conversation ``session``, the
    agent's name as ``disk_names.portable`` writes it and the file's ``file_name``. Raises
    ``ValidationError`` for a bad agent name."""
    return folder / portable(agent) / f"{file_name(session)}.md"


def write(
    folder: Path, session: str, messages: Sequence[Message], indexed: dict[int, str] | None = None, *, agent: str
) -> Path:
    """Write (atomically replace) ``agent``'s transcript of the session, after moving the agent's
    folder as an earlier version named it (``disk_names.settle``); returns its path.
    Raises ``StorageError`` and ``ValidationError`` (a bad agent name)."""
    path = transcript_path(folder, session, agent=agent)
    try:
        settle(folder / agent, path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render(session, messages, indexed))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        raise StorageError(f"cannot write transcript {path}: {exc}") from exc
    return path


def index(
    engram: Engram, session: str, messages: Sequence[Message], *, threshold: float = 0.0, last_only: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[int, str]:
    """Store each substantive turn whose ``importance`` reaches ``threshold`` as a conversation
    memory (``last_only``: just the latest turn); returns {turn number in ``messages``: label}.
    The memory's turn number is the one ``_TurnNumbers`` gives: a turn already indexed keeps its
    memory, so indexing again changes nothing, even after compaction or trimming discarded the
    turns before it. ``progress(phase, done, total)`` hears of each turn looked at (``INDEXING``):
    each stored turn is its own write, so a stop mid-way keeps the turns before it, and indexing
    again takes up the rest.

    Raises ``ValidationError`` from ``remember`` (e.g. a session id unusable in a key).
    """
    indexed: dict[int, str] = {}
    all_turns = turns(messages)
    names = _spellings(session)
    session = names[0]
    numbers = _TurnNumbers(engram, names)
    places = identities(all_turns)
    chosen = list(zip(all_turns, places, strict=True))[-1:] if last_only else list(zip(all_turns, places, strict=True))
    for done, (turn, place) in enumerate(chosen):
        if progress is not None:
            progress(INDEXING, done, len(chosen))
        if not is_substantive(turn) or importance(turn) < threshold:
            continue
        content = f"User: {turn.user}\nAgent: {turn.agent}" if turn.agent else f"User: {turn.user}"
        number = numbers.of(turn, place)
        key = f"transcript:{session}:{number}"
        held = numbers.held(turn, place)
        # A turn already stored is updated under its key, the old spelling's included (so it keeps
        # its id, links and recall counts); a second memory of it, which the two spellings made, goes.
        key = key if not held or key in {m.key for m in held} else str(held[0].key)
        for twin in held:
            if twin.key != key:
                _forget_quietly(engram, twin, f"a second memory of the turn stored as {key}")
        engram.remember(
            content[: engram.max_content_chars],
            key=key,
            category="conversation",
            type="conversation",
            tags=["transcript", f"session:{session}"[:64]],
            metadata={"session": session, "turn": number, "time": iso(turn.at), "at": place.at, "asked": place.asked,
                      "order": place.order},
            source=f"transcript:{session}"[:200],
            # A message's time is the client's, which may run ahead of this clock; a memory's creation
            # is record time and never later than now (``model.recorded_at`` refuses one far ahead).
            created_at=min(turn.at, engram.clock()) if turn.at else None,
            importance=round(importance(turn), 3),
        )
        indexed[turn.number] = label(turn)
    if progress is not None and chosen:
        progress(INDEXING, len(chosen), len(chosen))
    return indexed


@dataclass(frozen=True, slots=True)
class Place:
    """A turn's identity (``identities``): ``at``, ``asked`` and ``order``."""

    at: float
    asked: str  # a digest of the user's words (``_asked``)
    order: int
    # How many turns before it have its time, whatever their words: not part of the identity (it
    # changes when the first of them is discarded), only to find an earlier version's memory of
    # a time, which holds its first turn.
    nth_at_its_time: int = field(default=0, compare=False)


def _asked(turn: Turn) -> str:
    return hashlib.sha256(turn.user.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def identities(all_turns: Sequence[Turn]) -> list[Place]:
    """Each turn's identity: its time, what the user said (a digest), and how many turns before it
    in ``all_turns`` (the conversation the history holds) have both. Appended messages given no
    time have distinct ones (``History``), but a caller may give two turns the same time (an
    import whose exchanges share a second): the user's words tell them apart, and the order
    the rare turns that repeat them. The order alone (how many turns before it share its time)
    changed when trimming or compaction discarded the first of them: the next one took its
    identity, so an undo forgot the discarded turn's memory and indexing overwrote it."""
    seen: dict[tuple[float, str], int] = {}
    at_time: dict[float, int] = {}
    out = []
    for turn in all_turns:
        same = (turn.at, _asked(turn))
        out.append(Place(*same, seen.get(same, 0), at_time.get(turn.at, 0)))
        seen[same] = out[-1].order + 1
        at_time[turn.at] = out[-1].nth_at_its_time + 1
    return out


def unindex_undone(engram: Engram, session: str, before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """Forget the turn memory that an undo (``History.pop_newest``) made untrue: ``before`` is the
    whole conversation with the popped message, ``after`` without it (the turn's identity, like
    its number, counts from the conversation's start, as ``index`` counts). When the last turn
    read differently with the popped message (its answer, or the question itself), its memory
    (``engram``'s agent's own, found by the turn's identity as ``_TurnNumbers`` finds it) goes:
    an undone message is not recalled. The turn is indexed again when it ends again. Returns the
    keys forgotten. Raises ``StorageError``."""
    had, has = turns(before), turns(after)
    if not had or (has and has[-1] == had[-1]):
        return []  # the popped message was no turn's text (a tool result, a tool call)
    undone, place = had[-1], identities(had)[-1]
    # ``index`` names the session as shown (``telegram:42``); earlier versions' automatic indexing
    # by its stored key (``telegram:42:``): either may hold the turn.
    found = [m for m in _turn_memories(engram, dict.fromkeys([*_spellings(session), session]))
             if _holds(m, undone, place)]
    reason = f"undone: the turn's last message was removed from {session}"
    return [memory.key or memory.id for memory in found if _forget_quietly(engram, memory, reason)]


def _turn_memories(engram: Engram, names: Sequence[str]) -> list[Memory]:
    """This agent's transcript memories of the session under each of ``names`` (its spellings,
    ``_spellings``; the first's first), superseded ones included, newest first in each. Only the
    agent's own scope, where ``index`` puts them (and keys are unique): another agent's are not
    looked at."""
    from engram.engine import Filters

    found: list[Memory] = []
    for name in names:
        offset = 0
        while True:
            page = engram.list(Filters(tags="transcript", metadata={"session": name}, include_superseded=True),
                               scope="agent", order="recent", limit=_PAGE, offset=offset)
            found += page
            if len(page) < _PAGE:
                break
            offset += len(page)
    return found


def _identity(memory: Memory) -> Place | None:
    """The identity of the turn ``memory`` holds, from its metadata; None for a memory that an
    earlier version made, known by its creation time (its turn's) or, for a turn without a time,
    by its number."""
    at, asked, order = (memory.metadata.get(name) for name in ("at", "asked", "order"))
    if isinstance(at, int | float) and not isinstance(at, bool) and isinstance(asked, str) and _whole(order):
        return Place(float(at), asked, int(order))
    return None


def _holds(memory: Memory, turn: Turn, place: Place) -> bool:
    """Whether ``memory`` is the memory of ``turn``, whose identity is ``place``."""
    known = _identity(memory)
    if known is not None:
        return known == place
    # Made by an earlier version: the first turn at its time, or, without one, the turn numbered so.
    return memory.created_at == turn.at and _first_at_its_time(place) if turn.at else \
        memory.metadata.get("turn") == turn.number


def _first_at_its_time(place: Place) -> bool:
    return place.nth_at_its_time == 0  # an earlier version's memory of a time holds its first turn


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _forget_quietly(engram: Engram, memory: Memory, reason: str) -> bool:
    """Forget ``memory``; False when it is gone already (another process's
    undo or index forgot it meanwhile: as wanted)."""
    try:
        engram.forget(memory, reason=reason)
    except NotFoundError:
        return False
    return True


def turn_session(session: str) -> str:
    """The session as turn memories name it (key, tag, metadata): a conversation key as users
    write it (``cli:trip`` for the stored ``cli:trip:``), anything else (a ClawCode session id)
    as it is."""
    return _spellings(session)[0]


def _spellings(session: str) -> list[str]:
    """``turn_session`` first, then the conversation's stored key where it differs (``cli:trip:``,
    which automatic indexing named turns by before this version)."""
    try:
        key = parse_conversation_key(session)
    except ValidationError:
        return [session]
    return list(dict.fromkeys([key.shown, str(key)]))


def index_and_write(
    engram: Engram, folder: Path, session: str, messages: Sequence[Message], *, threshold: float = 0.0,
    progress: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Index the substantive turns (importance >= ``threshold``) into ``engram``'s agent's memory,
    then write that agent's transcript with their ``[Indexed: …]`` markers (``progress``: ``index``'s,
    then ``WRITING``; the file is replaced whole, so a stop before then leaves the one there was)."""
    indexed = index(engram, session, messages, threshold=threshold, progress=progress)
    if progress is not None:
        progress(WRITING, 0, 0)
    return write(folder, session, messages, {**already_indexed(engram, session, messages), **indexed},
                 agent=agent_of(engram))


def write_as_indexed(engram: Engram, folder: Path, session: str, messages: Sequence[Message]) -> Path:
    """Write ``engram``'s agent's transcript, indexing nothing: the turns already indexed (by
    automatic indexing or an earlier ``--index``) keep their ``[Indexed: …]`` markers, which the
    file dropped when written without them."""
    return write(folder, session, messages, already_indexed(engram, session, messages), agent=agent_of(engram))


def already_indexed(engram: Engram, session: str, messages: Sequence[Message]) -> dict[int, str]:
    """{turn number in ``messages``: label} of the turns a memory of ``engram``'s agent holds."""
    all_turns = turns(messages)
    numbers = _TurnNumbers(engram, _spellings(session))
    return {turn.number: label(turn) for turn, place in zip(all_turns, identities(all_turns), strict=True)
            if numbers.held(turn, place)}


class _TurnNumbers:
    """The number each turn of one conversation is indexed under (its memory's key and ``turn``).

    A turn's number in ``messages`` is its place in what the history holds now; once compaction
    or trimming discarded earlier turns, that place is another turn's number already, and keying
    by it would overwrite that turn's memory. So a turn already indexed (this session's transcript
    memory of the turn's identity, ``identities``, or, made by an earlier version, created at the
    turn's time) keeps its number, and a new one gets its place or, when that is not past every
    number already used, the next number after them."""

    def __init__(self, engram: Engram, names: Sequence[str]) -> None:
        # Each turn's memories (the current spelling's first) by identity; those an earlier version
        # made, by creation time and by number (for a turn without a time).
        self._by_place: dict[Place, list[Memory]] = {}
        self._old_at: dict[float, list[Memory]] = {}
        self._old_numbered: dict[int, list[Memory]] = {}
        self._numbers: dict[Place, int] = {}  # new turns numbered by this indexing
        self._highest = 0
        for memory in _turn_memories(engram, names):
            number = memory.metadata.get("turn")
            if not _whole(number) or not memory.key:
                continue
            place = _identity(memory)
            if place is None:
                self._old_at.setdefault(memory.created_at, []).append(memory)
                self._old_numbered.setdefault(number, []).append(memory)
            else:
                self._by_place.setdefault(place, []).append(memory)
            self._highest = max(self._highest, number)

    def held(self, turn: Turn, place: Place) -> list[Memory]:
        """The memories already holding ``turn``, whose identity is ``place`` (``_holds``)."""
        old = (self._old_at.get(turn.at, []) if _first_at_its_time(place) else []) if turn.at else \
            self._old_numbered.get(turn.number, [])
        return [*self._by_place.get(place, []), *old]

    def of(self, turn: Turn, place: Place) -> int:
        held = self.held(turn, place)
        if held:
            return int(held[0].metadata["turn"])
        number = self._numbers.get(place)
        if number is None:
            number = max(turn.number, self._highest + 1)
            self._numbers[place] = number
            self._highest = max(self._highest, number)
        return number


def agent_of(engram: Engram) -> str:
    """The agent whose conversations ``engram`` holds (as ``Engram.history`` names it)."""
    return engram.scope.agent or DEFAULT_AGENT


class TurnIndexer:
    """ClawCode's automatic indexing: "Trigger: End of each turn in conversation", in the
    background ("Index transcripts asynchronously"). ``turn_ended`` only queues the conversation;
    one worker thread indexes its latest turn (above ``threshold``) and rewrites its transcript in
    ``folder`` (None: no transcript is written, as for an encrypted store, whose memories keep the
    turns). ``turn_undone`` forgets an undone turn in the same queue, after the turns queued before
    it (one of them may be the turn undone), and waits for it. ``close`` finishes what is queued.
    Failures are logged: the history is already stored."""

    def __init__(self, engram: Engram, history: Any, folder: Path | None, threshold: float) -> None:
        self.engram, self.history, self.folder, self.threshold = engram, history, folder, threshold
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="engram-transcripts", daemon=True)
        self._thread.start()

    def turn_ended(self, key: str, count: int) -> None:
        """The turn that ended with the conversation's ``count``-th message (queued, not waited for).

        The conversation up to that message is read now, not by the worker: by then trimming or
        compaction may have discarded the turn, and the ``count``-th message would be another's."""
        try:
            upto = self.history.all(key)[:count]
        except EngramError as exc:  # the append is stored already: log and go on
            log.warning("turn of %s not indexed (%s)", key, exc)
            return
        self._queue.put(_Job(key, upto))

    def turn_undone(self, key: str, before: list[Message], after: list[Message]) -> None:
        """``History.pop_newest``'s hook: forget the turn the pop made untrue (``unindex_undone``)
        once the turns queued before are indexed, so none of them brings it back; returns when
        it is forgotten (an undo that returned is not recalled)."""
        done = threading.Event()
        self._queue.put(_Job(key, before, after, done))
        while not done.wait(WORKER_CHECK_S):
            # A pop racing ``close`` queues its job behind close's sentinel, where the worker,
            # ended, never runs it: run it here rather than wait for it forever.
            if not self._thread.is_alive():
                if not done.is_set():
                    unindex_undone(self.engram, key, before, after)
                return

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            key = job.key
            try:
                if job.undone is None:
                    index(self.engram, key, job.messages, threshold=self.threshold, last_only=True)
                else:
                    unindex_undone(self.engram, key, job.messages, job.undone)
                if self.folder is None:
                    continue
                messages = self.history.all(key)
                marked = {t.number: label(t) for t in turns(messages)
                          if is_substantive(t) and importance(t) >= self.threshold}
                write(self.folder, key, messages, marked, agent=self.history.agent)
            except Exception:  # a background job: log and go on, the conversation is stored
                log.exception("turn of %s not %s", key, "indexed" if job.undone is None else "unindexed")
            finally:
                if job.done is not None:
                    job.done.set()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


@dataclass(frozen=True, slots=True)
class _Job:
    """A turn to index (``messages``: the conversation up to its end) or, with ``undone`` (the
    conversation after a pop; ``messages`` before it), one to forget, ``done`` set once it is."""

    key: str
    messages: list[Message]
    undone: list[Message] | None = None
    done: threading.Event | None = None
