"""Adapters for agent frameworks, each behind its own extra (``langgraph``, ``langchain``,
``openai-agents``, ``pydantic-ai``, ``llamaindex``, ``agno``, ``google-adk``, ``strands``,
``autogen``).
Importing one without its extra raises an ``ImportError`` naming the ``pip install`` that fixes it."""

from engram.about import install_hint

# What goes before a LangGraph namespace label to name its engram agent (``EngramStore``'s
# ``agent_prefix``), so that a label (a user's id, data) never names one of the application's own
# agents. Here rather than in ``langgraph.py`` so that other doors (the mem0 facade) can keep
# clear of those agents without needing the langgraph extra.
DEFAULT_AGENT_PREFIX = "lg:"


def missing(extra: str, package: str) -> ImportError:
    return ImportError(f"{package} is not installed: {install_hint(extra)}")
