"""Adapters for agent frameworks, each behind its own extra (``langgraph``, ``langchain``,
``openai-agents``, ``pydantic-ai``, ``llamaindex``, ``agno``, ``google-adk``, ``strands``,
``autogen``, ``crewai``).
Importing one without its extra raises an ``ImportError`` naming the ``pip install`` that fixes it."""

from engram.about import install_hint
from engram.errors import ValidationError
from engram.model import make_scope

# What goes before a LangGraph namespace label to name its engram agent (``EngramStore``'s
# ``agent_prefix``), so that a label (a user's id, data) never names one of the application's own
# agents. Here rather than in ``langgraph.py`` so that other doors (the mem0 facade) can keep
# clear of those agents without needing the langgraph extra.
DEFAULT_AGENT_PREFIX = "lg:"


def missing(extra: str, package: str) -> ImportError:
    return ImportError(f"{package} is not installed: {install_hint(extra)}")


def checked_prefix(field: str, value: object, example: str) -> str:
    """``value`` checked as what an adapter puts before a framework's user id or label to name an
    engram agent (LangGraph's ``lg:``, Agno's ``agno:``, ADK's ``adk:``): a string an agent name
    can start with, or "" for none. Raises ``ValidationError`` naming ``field``."""
    if not isinstance(value, str):
        raise ValidationError(field, f"got {type(value).__name__}", f"a string such as {example!r}, or ''")
    if value:
        try:
            make_scope(value + "x", None)
        except ValidationError as exc:
            raise ValidationError(field, f"{value!r} cannot start an agent name", exc.allowed) from None
    return value
