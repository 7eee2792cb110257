"""What the model reads about engram's remember, recall, forget and versions tools in the framework toolsets
(Pydantic AI's ``EngramToolset``, Agno's and Strands Agents' ``EngramTools``, CrewAI's tools): their tools take the
same arguments, so one text describes both (Google style: the frameworks read each argument's line into the tool's
schema; ``split`` does it for a framework that does not, CrewAI). The MCP server's tools take more arguments and
describe their own."""

from __future__ import annotations

REMEMBER = """Store one fact, preference, decision or event in long-term memory so it can be recalled in later
conversations. Write it self-contained ("The user prefers Python for scripting"), one fact per call.
Give a key to update that memory later instead of adding a new one. Returns the memory_id.

Args:
    content: The memory itself, as a complete sentence.
    key: Stable name; storing the same key again updates that memory.
    tags: Short lowercase labels (at most 100), e.g. ["preferences", "python"].
    category: core (permanent identity facts), knowledge (things learned, the default) or
        conversation (short-lived notes).
    type: experience, conversation, learned, social, decision, achievement, or another word.
    importance: 0 trivial .. 1 essential.
"""

RECALL = """Search long-term memory for what is relevant to a question. Returns the best matches first, each
with memory_id, content, relevance (0..1), tags, timestamp and context. Ask short, specific
questions. An empty list means nothing relevant is stored.

Args:
    query: What you want to know, in plain words.
    limit: Most results to return (1 to 100); default 10 unless engram is set otherwise.
    min_relevance: Drop results below this relevance (0 to 1), e.g. 0.3.
    tags: Only memories with all of these tags.
"""

FORGET = """Remove memories that are wrong, outdated, or that the user asked you to forget. Give exactly one
of memory_id, key, query, tag or older_than_days. Always say why in reason. Use dry_run to see
what would be removed first.

Args:
    memory_id: Id (or key) of one memory, from recall.
    key: The memory's key, always read as a key (for a key that is also an id).
    query: Forget every memory containing all these words.
    tag: Forget every memory with this tag.
    older_than_days: Forget memories created more than this many days ago.
    reason: Why, kept in the audit trail.
    dry_run: Only list what would be forgotten.
"""

VERSIONS = """Read what one memory said before it was updated: its earlier contents, oldest first, each with
replaced_at (when an update replaced it, epoch seconds). An empty list means it was never changed.
Give exactly one of memory_id or key. Changes nothing.

Args:
    memory_id: Id (or key) of one memory, from recall.
    key: The memory's key, always read as a key (for a key that is also an id).
"""


def split(doc: str) -> tuple[str, dict[str, str]]:
    """``doc`` (one of the texts above) as what the tool does and each argument's description, in
    order: what a framework that takes a description and per-argument descriptions is given."""
    summary, _, args = doc.partition("\nArgs:\n")
    described: dict[str, str] = {}
    name = ""
    for line in args.splitlines():
        if line.startswith("    ") and not line.startswith("        "):
            name, _, text = line.strip().partition(": ")
            described[name] = text
        elif line.strip():  # an argument's description continued on the next line
            described[name] += " " + line.strip()
    return summary.strip(), described
