"""Settings of the agent loop (PtrClaw's ``memory`` block, with engram's names).

Environment: ``ENGRAM_CHAT__RECALL_LIMIT=8``; config file: ``[chat]`` ``recall_limit = 8``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from engram.model import MAX_RECALL_LIMIT
from engram.settings_section import SettingsSection


class ChatSettings(SettingsSection):
    # Enrichment: entries recalled per user message, and link hops followed from them.
    # 0 recalls nothing: no block (PtrClaw's uint32 recall_limit allows it).
    recall_limit: int = Field(5, ge=0, le=100)
    enrich_depth: int = Field(1, ge=0, le=3)
    # Store every user and assistant message as a conversation memory.
    auto_save: bool = False
    # Periodic synthesis of atomic notes (needs an LLM).
    synthesis: bool = True
    synthesis_interval: int = Field(5, ge=1)
    # Per-turn fact extraction: auto = rule-based when no LLM is configured, none otherwise
    # (synthesis covers it); llm = sclaw's extractor on every exchange; rules; none.
    extractor: Literal["auto", "llm", "rules", "none"] = "auto"
    # Response cache (deduplicates identical provider calls).
    response_cache: bool = False
    cache_ttl_s: float = Field(3600.0, ge=0)
    cache_max_entries: int = Field(100, ge=1)
    # Operator memory: MEMORY.md in ENGRAM_HOME, injected into the system prompt up to this size.
    memory_md: bool = True
    memory_max_chars: int = Field(4000, ge=0)
    # Extra system-prompt section of relevant memories (sclaw InjectMemory / PHP toPromptContext).
    injection: Literal["none", "relevant_memory", "prompt_context"] = "none"
    inject_max_tokens: int = Field(2000, ge=1)
    inject_max_facts: int = Field(10, ge=1, le=MAX_RECALL_LIMIT)  # it is a recall limit
    # Tool loop: provider round trips allowed per user message.
    max_tool_iterations: int = Field(8, ge=1, le=50)
    # Hygiene after compaction: conversation memories older than this are purged (7 days).
    # Idle sessions are evicted after this long (SessionManager).
    session_idle_s: float = Field(3600.0, gt=0)
