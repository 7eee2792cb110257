"""History compaction lives in ``engram.history.compaction`` (the history owns how a conversation
is shortened; the agent supplies the summariser and the extractor). Kept importable from here."""

from engram.history.compaction import (
    CompactionResult,
    Extractor,
    Purger,
    Summarizer,
    compact_conversation,
    compact_messages,
    count_summary,
    cut_point,
    is_critical,
    should_compact,
)

__all__ = ["CompactionResult", "Extractor", "Purger", "Summarizer", "compact_conversation", "compact_messages",
           "count_summary", "cut_point", "is_critical", "should_compact"]
