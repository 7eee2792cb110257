"""``MemoryAgent``: PtrClaw's ``Agent::process`` over engram.

One user message goes through, in this order:

1. ``memory_enrich`` - a ``[Memory context]`` block of relevant entries (skipped while hatching);
2. the system prompt - base prompt, soul block, operator ``MEMORY.md`` (and, optionally, a
   ``## Relevant Memory`` section); the hatch prompt while hatching;
3. the response cache - a hit skips the provider;
4. the provider, in a tool loop where the model may call memory_store / recall / forget / link;
5. synthesis every ``synthesis_interval`` user messages (per-turn rule-based extraction when no
   LLM is configured);
6. compaction when the history is past its limits - synthesis is forced first, as the
   extraction hook, so nothing is discarded before what it taught is kept;
7. the response cache stores the reply.

The session's working history is in memory; every message is also written behind to the
``History`` store, and a storage failure there is logged and never fails the turn (sclaw).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from engram.agent import prompts
from engram.agent.enrich import memory_enrich, strip_memory_context
from engram.agent.extract import Fact, FactExtractor, LLMExtractor, RuleExtractor
from engram.agent.inject import inject_memory
from engram.agent.response_cache import ResponseCache, discard_plain_cache
from engram.agent.settings import ChatSettings
from engram.agent.soul import build_hatch_prompt, build_soul_block, has_soul_block, parse_soul, store_soul
from engram.agent.summarize import LLMSummarizer
from engram.agent.synthesize import Applied, SynthesisReport, Synthesizer, notes_from_facts, reconcile
from engram.agent.tools import MemoryTools
from engram.config import RESPONSE_CACHE_NAME, Settings
from engram.engine import Engram
from engram.errors import EngramError, ProviderError, StorageError, ValidationError
from engram.history.compaction import CompactionResult, compact_messages
from engram.history.service import History, summary_message, without_orphans
from engram.history.settings import CompactionSettings
from engram.llm.base import ChatProvider, Usage, assistant_message, system_message, tool_message, user_message
from engram.model import MAX_RECALL_LIMIT, Category, Message, Role
from engram.tokens import count_text

log = logging.getLogger("engram.agent")

SYNTHESIS_OFF = ("synthesis is off (no LLM configured): rule-based extraction stores plain first-person statements, "
                 "and recall still works")
# Said instead when the configured extractor stores nothing without an LLM: claiming the rules
# store statements left a user of `chat.extractor = "llm"` wondering why nothing was kept.
EXTRACTION_OFF = {
    "llm": ('synthesis is off (no LLM configured), and so is fact extraction: chat.extractor = "llm" needs an LLM '
            '(set ENGRAM_LLM__PROVIDER, or chat.extractor = "auto" or "rules" for rule-based extraction); recall still works'),
    "none": 'synthesis is off (no LLM configured), and so is fact extraction (chat.extractor = "none"); recall still works',
}


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What one ``process`` call did."""

    reply: str
    cached: bool = False
    tool_calls: tuple[str, ...] = ()
    stored: tuple[str, ...] = ()  # keys written by extraction or synthesis this turn
    synthesized: bool = False
    compaction: CompactionResult | None = None
    hatched: bool = False
    usage: Usage = Usage()
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Turn:
    tool_calls: list[str] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    synthesized: bool = False


class MemoryAgent:
    def __init__(
        self,
        engram: Engram,
        provider: ChatProvider | None = None,
        settings: ChatSettings | None = None,
        *,
        history: History | None = None,
        conversation: str = "cli:local:",
        cache: ResponseCache | None = None,
        operator_memory: Callable[[], str] | str = "",
        extractor: FactExtractor | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.engram = engram
        self.provider = provider
        self.settings = settings or ChatSettings()
        self.history = history
        self.conversation = conversation
        self.cache = cache
        self._operator_memory = operator_memory
        self.clock = clock
        self.tools = MemoryTools(engram)
        self.synthesizer = Synthesizer(engram, provider) if provider is not None else None
        self.summarizer = LLMSummarizer(provider) if provider is not None else None
        self.extractor = extractor if extractor is not None else self._default_extractor()
        self.hatching = False
        self.user_turns = 0
        self.messages: list[Message] = []
        self.summary = ""
        self._last_prompt_tokens: int | None = None

    def _default_extractor(self) -> FactExtractor | None:
        mode = self.settings.extractor
        if mode == "rules" or (mode == "auto" and self.provider is None):
            return RuleExtractor()
        if mode == "llm" and self.provider is not None:
            return LLMExtractor(self.provider)
        return None

    @property
    def without_llm(self) -> str:
        """What chat does with no LLM configured, as the banner says it: what is stored and recalled."""
        return EXTRACTION_OFF.get(self.settings.extractor, SYNTHESIS_OFF) if self.extractor is None else SYNTHESIS_OFF

    @property
    def synthesis_on(self) -> bool:
        return self.settings.synthesis and self.synthesizer is not None

    def restore(self) -> MemoryAgent:
        """Load the conversation's stored summary and recent messages (a recreated session)."""
        if self.history is not None:
            try:
                self.messages = self.history.restore(self.conversation)
                self.summary = self.history.summary(self.conversation)
            except StorageError as exc:
                log.warning("history not restored (%s); starting empty", exc)
        return self

    # --- prompt --------------------------------------------------------------------------
    def operator_memory(self) -> str:
        source = self._operator_memory
        try:
            return source() if callable(source) else source
        except StorageError as exc:
            log.warning("MEMORY.md not read (%s)", exc)
            return ""

    def system_prompt(self, message: str = "") -> str:
        """The system prompt for this turn (the hatch prompt while hatching)."""
        if self.hatching:
            return build_hatch_prompt()
        parts = [prompts.load("system")]
        soul = build_soul_block(self.engram)
        if soul:
            parts.append(soul)
        notes = self.operator_memory()
        if notes:
            parts.append(f"## Operator notes (MEMORY.md)\n{notes}")
        if self.settings.injection != "none" and message:
            section = inject_memory(
                self.engram, message, max_facts=self.settings.inject_max_facts,
                max_tokens=self.settings.inject_max_tokens, estimator=count_text, style=self.settings.injection,
            )
            if section:
                parts.append(section)
        return "\n\n".join(parts)

    # --- the loop --------------------------------------------------------------------------
    def start_hatching(self) -> None:
        """Enter hatching: the next messages build the agent's identity (no tools, no enrichment)."""
        self.hatching = True

    def start(self) -> bool:
        """A first interaction (PtrClaw's ``/start``): hatch when the agent has no soul yet.

        Returns whether hatching started; an agent that already has an identity keeps it (``/hatch``
        re-hatches on purpose)."""
        if build_soul_block(self.engram):
            return False
        self.start_hatching()
        return True

    def process(self, message: str) -> TurnResult:
        """Answer one user message (see the module docstring for the order of steps).

        Raises ``ValidationError`` for an empty message and ``ProviderError`` when the model
        cannot be reached (the user message stays in the history).
        """
        if not isinstance(message, str) or not message.strip():
            raise ValidationError("message", "must not be empty", "some text")
        turn = _Turn()
        hatching = self.hatching
        enriched = message if hatching else memory_enrich(
            self.engram, message, self.settings.recall_limit, self.settings.enrich_depth
        )
        system = self.system_prompt(message)
        model = self.provider.model if self.provider is not None else ""
        self.user_turns += 1
        self._record(user_message(enriched))
        # The cache key is the whole call the model would get (system prompt, summary, history and
        # this message) plus who asks: another agent or another conversation never shares an answer.
        call = self._context(system)
        if self.cache is not None and self.provider is not None and not hatching:
            hit = self.cache.get(model, self.cache_scope, call)
            if hit is not None:
                self._record(assistant_message(hit))
                self._auto_save(message, hit, turn)
                compaction = self.compact()
                return TurnResult(hit, cached=True, compaction=compaction if compaction.compacted else None,
                                  notes=tuple(turn.notes))
        if self.provider is None:
            reply = self._answer_without_llm(message, turn)
            self._record(assistant_message(reply))
        else:
            reply = self._tool_loop(system, turn, tools=not hatching)
        hatched = hatching and self._finish_hatching(reply, turn)
        if not hatching:
            self._extract(message, reply, turn)
            if self.synthesis_on and self.user_turns % self.settings.synthesis_interval == 0:
                self._synthesize(self.messages, turn)
        compaction = self.compact()
        if compaction.compacted:
            turn.notes.extend(compaction.notes)
        if self.cache is not None and self.provider is not None and not hatching and not turn.tool_calls:
            # Turns that called tools had side effects a cache hit would skip: never cached.
            try:
                self.cache.put(model, self.cache_scope, call, reply)
            except StorageError as exc:
                log.warning("response not cached (%s)", exc)
        self._auto_save(message, reply, turn)
        return TurnResult(
            reply, tool_calls=tuple(turn.tool_calls), stored=tuple(dict.fromkeys(turn.stored)),
            synthesized=turn.synthesized, compaction=compaction if compaction.compacted else None, hatched=hatched,
            usage=Usage(turn.prompt_tokens, turn.completion_tokens), notes=tuple(turn.notes),
        )

    @property
    def cache_scope(self) -> str:
        """Who is asking, for the response cache: the memory's agent and session and this
        conversation (JSON, so no choice of names can make two scopes equal)."""
        scope = self.engram.scope
        return json.dumps([scope.agent, scope.session, self.conversation])

    def _context(self, system: str) -> list[Message]:
        head = [system_message(system)]
        if self.summary:
            head.append(summary_message(self.summary))
        return [*head, *without_orphans(self.messages)]

    def _tool_loop(self, system: str, turn: _Turn, *, tools: bool) -> str:
        specs = self.tools.specs if tools else ()
        assert self.provider is not None
        for _ in range(self.settings.max_tool_iterations):
            response = self.provider.chat(self._context(system), tools=specs)
            self._account(response.usage, turn)
            if not response.tool_calls:
                self._record(assistant_message(response.text))
                return response.text
            self._record(response.as_message())
            for call in response.tool_calls:
                turn.tool_calls.append(call.name)
                result = self.tools.dispatch(call)
                if call.name == "memory_store" and not result.is_error:
                    turn.stored.append(result.content.split(": ", 1)[-1].split(" (")[0])
                self._record(tool_message(call, result.content))
        # Out of tool rounds: one last call without tools forces a text answer.
        response = self.provider.chat(self._context(system))
        self._account(response.usage, turn)
        turn.notes.append(f"stopped calling tools after {self.settings.max_tool_iterations} rounds")
        self._record(assistant_message(response.text))
        return response.text

    def _account(self, usage: Usage, turn: _Turn) -> None:
        turn.prompt_tokens += usage.prompt_tokens
        turn.completion_tokens += usage.completion_tokens
        self._last_prompt_tokens = usage.prompt_tokens or None

    def _record(self, message: Message) -> None:
        """Append to the working history, then write behind to the store (never fatal)."""
        message = Message(message.role, message.content, message.tool_calls, message.tool_call_id,
                          created_at=self.clock())
        self.messages.append(message)
        if self.history is not None:
            limit = self.history.max_history_len
            if len(self.messages) > limit:
                self.messages = without_orphans(self.messages[-limit:])
            try:
                self.history.add(self.conversation, message)
            except EngramError as exc:
                log.warning("history write failed (%s); the turn goes on", exc)

    # --- knowledge -------------------------------------------------------------------------
    def _answer_without_llm(self, message: str, turn: _Turn) -> str:
        """No model: say what was stored and what memory holds on the topic."""
        facts = self._facts(message)
        applied = self._reconcile_facts(facts, turn)
        lines: list[str] = []
        for item in applied:
            if item.memory is None:
                continue
            verb = {"created": "Noted", "updated": "Updated", "superseding": "Noted"}.get(item.outcome, "Already known")
            lines.append(f"{verb}: {item.memory.content} [{item.memory.key}]")
        stored_ids = {item.memory.id for item in applied if item.memory is not None}
        recalled = [] if not message.strip() or self.settings.recall_limit < 1 else [
            m for m in self.engram.recall(message, limit=min(self.settings.recall_limit * 2, MAX_RECALL_LIMIT)).memories
            if m.category is not Category.CORE and m.id not in stored_ids
        ][: self.settings.recall_limit]
        if recalled:
            lines.append("From memory:")
            lines.extend(f"- {m.key}: {m.content}" for m in recalled)
        if not lines:
            lines.append("Nothing stored or recalled for that.")
        return "\n".join(lines)

    def _facts(self, message: str, reply: str = "", *, source: str | None = None) -> list[Fact]:
        """What the extractor reads in an exchange, read from its text as the store keeps it
        (``privacy.pii``: redacted under ``redact``), so nothing made from it holds what redaction
        masks. Read from the text as given, a fact's slot key carried it (``user-prefers-carol-example``:
        engram keeps a key as given), and the rule extractor cut an address at its last dot
        ("alice@example."), which no detector finds, so the fact's text kept it too."""
        if self.extractor is None:
            return []

        def as_stored(text: str) -> str:
            return self.engram.privacy.screen(text, as_json=False)[0] if text else text

        return self.extractor.extract(as_stored(message), as_stored(reply),
                                      source=self.conversation if source is None else source)

    def _reconcile_facts(self, facts: Sequence[object], turn: _Turn) -> list[Applied]:
        if not facts:
            return []
        report = reconcile(self.engram, notes_from_facts(facts), source="extraction",  # type: ignore[arg-type]
                           conversation=self._shown_conversation)
        turn.stored.extend(a.memory.key for a in report.applied if a.memory is not None and a.outcome != "skipped")
        return report.applied

    def _extract(self, message: str, reply: str, turn: _Turn) -> None:
        if self.extractor is None or self.provider is None:
            return  # without an LLM the no-LLM answer already extracted
        try:
            self._reconcile_facts(self._facts(message, reply), turn)
        except ProviderError as exc:
            turn.notes.append(f"fact extraction failed: {exc}")

    def _synthesize(self, messages: Sequence[Message], turn: _Turn | None = None) -> SynthesisReport | None:
        """Synthesis over ``messages``; a provider failure is noted, never fatal here."""
        if not self.synthesis_on:
            return None
        assert self.synthesizer is not None
        try:
            report = self.synthesizer.run(messages, conversation=self._shown_conversation)
        except ProviderError as exc:
            if turn is not None:
                turn.notes.append(f"synthesis failed: {exc}")
            log.warning("synthesis failed: %s", exc)
            return None
        if turn is not None:
            turn.synthesized = True
            turn.stored.extend(a.memory.key for a in report.applied if a.memory is not None and a.outcome != "skipped")
        return report

    def _force_extraction(self, discarded: Sequence[Message]) -> None:
        """Compaction's hook: keep what the discarded messages taught. Raises so that a failure
        leaves the history uncompacted."""
        if self.synthesis_on:
            assert self.synthesizer is not None
            self.synthesizer.run(discarded, conversation=self._shown_conversation)
        elif self.extractor is not None and self.provider is None:
            for m in discarded:
                if m.role is Role.USER:
                    facts = self._facts(strip_memory_context(m.content), source="")
                    reconcile(self.engram, notes_from_facts(facts), source="extraction",
                              conversation=self._shown_conversation)

    # --- compaction ------------------------------------------------------------------------
    def compact(self, *, force: bool = False) -> CompactionResult:
        """Compact the conversation when past its limits (``force``: anyway) through the one
        compaction path, ``History.compact``, with this agent's summariser and extractor; the
        session then continues from what the history kept. Without a stored history (or when the
        store fails: logged) the working history is compacted the same way in memory."""
        if self.history is not None:
            try:
                result = self.history.compact(self.conversation, summarizer=self.summarizer,
                                              extract=self._force_extraction,
                                              reported_tokens=self._last_prompt_tokens, force=force)
            except StorageError as exc:
                log.warning("stored history not compacted (%s); the session's history is", exc)
            else:
                if result.compacted:
                    self.messages = self.history.restore(self.conversation)
                    self.summary = result.summary
                    self._last_prompt_tokens = None  # the next call reports the new size
                return result
        settings = self.history.compaction if self.history is not None else CompactionSettings()
        result = compact_messages(
            self.messages, settings, previous_summary=self.summary, summarizer=self.summarizer,
            extract=self._force_extraction, reported_tokens=self._last_prompt_tokens, force=force,
        )
        if result.compacted:
            self.messages = list(result.kept)
            self.summary = result.summary
            self._last_prompt_tokens = None
        return result

    @property
    def history_key(self) -> str:
        from engram.history.keys import normal_key

        return normal_key(self.conversation)

    @property
    def _shown_conversation(self) -> str:
        """The conversation as ``History.conversations`` lists it (``telegram:42``): what a fact
        extracted or synthesized here records in its metadata (``synthesize.CONVERSATION_METADATA``)."""
        from engram.history.keys import shown_key

        return shown_key(self.conversation)

    # --- hatching ------------------------------------------------------------------------------
    def _finish_hatching(self, reply: str, turn: _Turn) -> bool:
        if not has_soul_block(reply):
            return False
        try:
            soul = parse_soul(reply)
            stored = store_soul(self.engram, soul)
        except ValidationError as exc:
            turn.notes.append(f"hatching not finished: {exc}")
            return False
        turn.stored.extend(m.key for m in stored)
        self._synthesize(self.messages, turn)  # PtrClaw: synthesis runs on the hatching conversation
        self.hatching = False
        self.messages = []
        self.summary = ""
        if self.history is not None:
            try:
                self.history.purge(self.conversation)
            except EngramError as exc:
                log.warning("hatching history not cleared (%s)", exc)
        return True

    @classmethod
    def from_settings(cls, settings: Settings, engram: Engram | None = None, *, conversation: str | None = None) -> MemoryAgent:
        """An agent as configured: the memory, ``[llm]`` provider, ``[chat]`` options, history,
        response cache and ``MEMORY.md`` in ``settings.home``. Raises ``ConfigError`` and
        ``StorageError``."""
        from engram.files.memory_md import ensure_memory_md, read_memory_md
        from engram.history.keys import conversation_key
        from engram.llm import create_provider

        engram = engram or Engram.from_settings(settings)
        chat = settings.chat
        provider = create_provider(settings.llm)
        operator: Callable[[], str] | str = ""
        if chat.memory_md:
            ensure_memory_md(settings.home)
            operator = lambda: read_memory_md(settings.home, chat.memory_max_chars)  # noqa: E731 - read every turn
        cache = None
        cache_file = settings.response_cache_file()
        if cache_file is None:  # a key is set: a cache file from before it holds answers in clear, cache on or off
            discard_plain_cache(settings.home / RESPONSE_CACHE_NAME)
        if chat.response_cache:
            cache = ResponseCache.open(cache_file, ttl_s=chat.cache_ttl_s, max_entries=chat.cache_max_entries,
                                       privacy=engram.privacy)
        # Agent and session names may hold ':', which separates a conversation key's parts.
        agent_part = (engram.scope.agent or "default").replace(":", "_")
        session_part = engram.scope.session.replace(":", "_") if engram.scope.session else None
        key = conversation or conversation_key("cli", agent_part, session_part)
        agent = cls(engram, provider, chat, history=engram.history, conversation=key, cache=cache, operator_memory=operator)
        return agent.restore()

    def close(self) -> None:
        if self.provider is not None:
            self.provider.close()

    # --- auto-save -----------------------------------------------------------------------------
    def _auto_save(self, message: str, reply: str, turn: _Turn) -> None:
        if not self.settings.auto_save:
            return
        for role, text in (("user", message), ("assistant", reply)):
            if not text.strip():
                continue
            try:
                self.engram.remember(text[: self.engram.max_content_chars], category=Category.CONVERSATION,
                                     type="conversation", tags=(role,), source=self.conversation)
            except EngramError as exc:
                turn.notes.append(f"auto-save failed: {exc}")
