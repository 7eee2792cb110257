"""``json.loads`` for documents users hand in (imports, snapshots): one nested past Python's
recursion limit (``[[[[...`` 5,000 deep) is malformed JSON, reported like any other, not a
``RecursionError`` that reached HTTP clients as a 500."""

from __future__ import annotations

import json
from typing import Any


def loads(document: str | bytes) -> Any:
    """``json.loads(document)``; raises ``json.JSONDecodeError`` for a document nested too deeply."""
    try:
        return json.loads(document)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", document if isinstance(document, str) else "", 0) from None
