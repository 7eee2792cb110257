"""This agent's conversation history, opened on first use, and the transcript indexing bound to it.

The history's storage is ``engram.history``'s and its opening ``engram.root``'s (from settings; in
process memory without them). Here: one history per agent for every view of an engine (an HTTP
server makes a view per request), opened once under a lock, its turn indexer started once
(``files.transcripts``), and all closed by ``Engram.close``, so a turn queued for indexing is
indexed before the process ends.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.model import Message

if TYPE_CHECKING:
    from engram.history.service import History


class _Conversations:
    """``Engram``'s conversation history."""

    @property
    def history(self) -> History:
        """This agent's conversation history (``settings.history``), opened on first use; in memory
        when this Engram was built without settings. It holds this agent's conversations only: a
        view from ``for_agent`` shares its engine's storage and sees its own agent's. Compaction
        purges this agent's own old conversation memories, never global ones nor another agent's.
        Refused once the engine is closed (it would open the history again, on a shut backend)."""
        self.writes.refuse_when_closed("use its conversation history")
        if self._history is not None:
            return self._history
        with self._history_lock:
            if self._history is None:
                self._history = self._open_history()
            return self._history

    def _open_history(self) -> History:
        from engram.root import open_history

        purge = self._forget_old_conversations
        agent = self.scope.agent or "default"
        if self._history_root is not None:
            return self._history_root._agent_history(agent)
        if self.settings is None:
            from engram.history.inmemory import InMemoryHistoryStore
            from engram.history.service import History

            history = History(InMemoryHistoryStore(agent=agent), purge=purge, privacy=self.privacy)
            self._index_turns(history)
            return history
        # The engine's PII policy screens its conversations as it screens its memories.
        history = open_history(self.settings, agent, self.backend, embedder=self.embedder, purge=purge,
                               privacy=self.privacy)
        self._index_turns(history)
        return history

    def _agent_history(self, agent: str) -> History:
        """``agent``'s history for every view of this engine: opened once (an HTTP server makes a
        view per request), its turn indexer started once, and both closed by ``close``, so a turn
        queued for indexing is indexed before the process ends."""
        if agent == (self.scope.agent or "default"):
            return self.history
        with self._agent_histories_lock:
            found = self._agent_histories.get(agent)
            if found is None:
                owner = self.for_agent(agent)
                found = self.history.for_agent(agent, purge=owner._forget_old_conversations)
                owner._index_turns(found)
                self._agent_histories[agent] = found
            return found

    def _index_turns(self, history: History) -> None:
        """ClawCode's automatic transcript indexing (``history.transcript_auto_index``): each ended
        turn of this agent's conversations is indexed in the background into this agent's memory,
        and its transcript rewritten where ``Settings.automatic_transcripts_folder`` says. Whether
        or not it is on, a turn indexed as this agent's memory (automatically or by ``history
        transcript --index``) is forgotten when ``pop_newest`` undoes it."""
        from engram.files.transcripts import TurnIndexer, unindex_undone

        def forget_undone(key: str, before: list[Message], after: list[Message]) -> None:
            unindex_undone(self, key, before, after)

        history.undo_hook = forget_undone
        h = self.settings.history if self.settings is not None else None
        if h is None or not h.transcript_auto_index:
            return
        indexer = TurnIndexer(self, history, self.settings.automatic_transcripts_folder(),  # type: ignore[union-attr]
                              h.transcript_importance_threshold)
        history.turn_hook = indexer.turn_ended
        # Through the indexer's queue: a turn queued for indexing before the undo is not indexed after it.
        history.undo_hook = indexer.turn_undone
        history.on_close(indexer.close)
