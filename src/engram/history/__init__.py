"""Conversation history: the HistoryStore contract, its backends, and the pipeline around them."""
