"""Adapters that expose the engine: CLI, MCP, HTTP. They parse, call ``Engram``, and format."""
