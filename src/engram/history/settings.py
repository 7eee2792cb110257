"""History settings (``[history]`` in config.toml, ``ENGRAM_HISTORY__*`` in the environment)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from engram.settings_section import SettingsSection

# The most exchanges a semantic recall returns from the setting or a request's topK (the same bound at both).
MAX_RECAP_TOP_K = 100


class CompactionSettings(SettingsSection):
    """When and how ``history.compaction`` shortens a conversation (PtrClaw + sclaw)."""

    max_history_messages: int = Field(50, ge=2)
    token_limit: int = Field(128_000, ge=100)
    # Compact once the estimated tokens pass this share of token_limit.
    token_threshold: float = Field(0.75, gt=0.0, le=1.0)
    # Compaction runs only when the history has more than this many messages.
    min_messages: int = Field(12, ge=1)
    keep_recent: int = Field(10, ge=1)
    # Emergency path: past emergency_ratio x token_limit keep only emergency_retain messages.
    emergency_ratio: float = Field(1.0, gt=0.0)
    emergency_retain: int = Field(4, ge=1)
    # Conversation memories older than this are purged after a compaction (PtrClaw's hygiene); 0 = never.
    conversation_max_age_s: float = Field(604_800.0, ge=0.0)

    @model_validator(mode="after")
    def _consistent(self) -> CompactionSettings:
        if self.keep_recent >= self.min_messages:
            raise ValueError("keep_recent must be smaller than min_messages")
        return self


class HistorySettings(SettingsSection):
    # Clawless's CONVERSATION_HISTORY_ENABLED: off, appends are accepted but not stored (nor
    # indexed); what is already stored stays readable.
    enabled: bool = True
    # sqlite | jsonl | inmemory | postgres; left unset it follows a PostgreSQL memory backend.
    backend: str = "sqlite"
    # sqlite: the memory database unless set; jsonl: home/conversation-history.jsonl unless set.
    path: Path | None = None
    # Pipeline-level bound (sclaw's MaxHistoryLen): the oldest messages go after each append.
    max_history_len: int = Field(100, ge=2)
    # JSONL caps (Clawless): lines kept per agent (FIFO), characters per message, characters per recap.
    max_entries: int = Field(100, ge=1)
    max_chars_per_entry: int = Field(2000, ge=10)
    max_total_chars: int = Field(8000, ge=100)
    # Semantic store of exchanges (needs an embedder; off without one).
    semantic: bool = True
    semantic_max_entries: int = Field(1000, ge=1)
    semantic_max_chars_per_entry: int = Field(4000, ge=10)
    recap_top_k: int = Field(3, ge=1, le=MAX_RECAP_TOP_K)
    # Unset: home/transcripts (``Settings.transcripts_folder``). With an encryption key, turn
    # indexing writes transcripts only when this is set (``Settings.automatic_transcripts_folder``).
    transcripts_dir: Path | None = None
    # ClawCode: index each turn as it ends, in the background (the latest turn of the conversation
    # becomes a memory and its transcript is rewritten), when its importance reaches the threshold.
    transcript_auto_index: bool = False
    transcript_importance_threshold: float = Field(0.0, ge=0.0, le=1.0)
    compaction: CompactionSettings = Field(default_factory=CompactionSettings)
