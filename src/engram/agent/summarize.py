"""An LLM summariser for compaction (``history.compaction.Summarizer``) on any chat provider."""

from __future__ import annotations

from collections.abc import Sequence

from engram.agent import prompts
from engram.agent.enrich import strip_memory_context
from engram.errors import ProviderError
from engram.llm.base import ChatProvider, user_message
from engram.model import Message, Role

SUMMARY_PREFIX = "Summary so far:"


class LLMSummarizer:
    def __init__(self, provider: ChatProvider, *, max_words: int = 200, temperature: float = 0.2) -> None:
        self.provider = provider
        self.max_words = max_words
        self.temperature = temperature

    def summarize(self, messages: Sequence[Message]) -> str:
        """A summary of ``messages`` (a leading ``Summary so far`` system message is folded in).
        Raises ``ProviderError`` when the provider fails or answers with nothing."""
        previous = ""
        lines: list[str] = []
        for message in messages:
            if message.role is Role.SYSTEM and message.content.startswith(SUMMARY_PREFIX):
                previous = f"Summary so far:\n{message.content[len(SUMMARY_PREFIX):].strip()}\n"
            elif message.role in (Role.USER, Role.ASSISTANT) and message.content.strip():
                lines.append(f"{message.role.value}: {strip_memory_context(message.content)}")
            elif message.tool_calls:
                lines.append(f"assistant called: {', '.join(c.name for c in message.tool_calls)}")
        prompt = prompts.render("summarise", max_words=str(self.max_words), previous=previous,
                                conversation="\n".join(lines))
        text = self.provider.chat([user_message(prompt)], temperature=self.temperature).text.strip()
        if not text:
            raise ProviderError(f"{self.provider.name}: the summariser answered with nothing")
        return text
