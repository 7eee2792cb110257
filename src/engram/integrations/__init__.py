"""Adapters for agent frameworks, each behind its own extra (``langgraph``, ``langchain``,
``openai-agents``). Importing one without its extra raises an ``ImportError`` naming the
``pip install`` that fixes it."""

from engram.about import install_hint


def missing(extra: str, package: str) -> ImportError:
    return ImportError(f"{package} is not installed: {install_hint(extra)}")
