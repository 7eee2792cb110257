"""Letta's memory blocks and archival passages as engram records (the mapping is in the package's
docstring): a block is one ``core`` memory keyed ``letta-<label>`` whose identity is its label and
text; a passage is a ``knowledge`` memory."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from engram.importers.base import (
    Record,
    a_list,
    fail,
    metadata,
    optional_text,
    require_text,
    slug,
    tags,
    timestamp,
    with_provenance,
    wrong_type,
    wrong_value,
)
from engram.importers.letta.common import KIND
from engram.model import Category


def read_blocks(value: Any) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The file's ``blocks`` by their id, each with its place (``blocks[1]``): agents name theirs
    in ``block_ids``."""
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for j, block in enumerate(a_list(value, "blocks")):
        where = f"blocks[{j}]"
        if not isinstance(block, Mapping):
            raise wrong_type(where, block, "a memory block object")
        block_id = optional_text(block.get("id"), f"{where}.id")
        if block_id is None:
            raise fail(f"{where}.id", "is missing", "the block's id, which agents name in block_ids")
        found[block_id] = (where, block)
    return found



def read_block(block: Any, where: str, agent: str, engram_agent: str | None, warnings: list[str]) -> Record | None:
    if not isinstance(block, Mapping):
        raise wrong_type(where, block, "a memory block object")
    label = require_text(block.get("label"), f"{where}.label")
    value = block.get("value")
    if not isinstance(value, str):
        raise wrong_type(f"{where}.value", value, "the block's text")
    if not value.strip():
        warnings.append(f"{where}: the {label!r} block is empty; nothing to import")
        return None
    limit = block.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise wrong_value(f"{where}.limit", limit, "a number of characters")
    own = metadata(block.get("metadata", block.get("metadata_")), f"{where}.metadata")
    provenance = {k: v for k, v in (
        ("agent", agent), ("label", label), ("block", optional_text(block.get("id"), f"{where}.id")),
        ("limit", limit), ("description", optional_text(block.get("description"), f"{where}.description")),
        ("read_only", True if block.get("read_only") is True else None)) if v is not None}
    created = timestamp(block.get("created_at"), f"{where}.created_at")
    return Record(
        source_id=f"block:{label}:{hashlib.sha256(value.encode()).hexdigest()}",
        where=where,
        content=value,
        key=f"letta-{slug(label)}",
        category=Category.CORE,
        importance=0.8,  # always in the agent's context in Letta
        # Its label, then the tags Letta gives a block (newer servers): both say what it is about.
        tags=tuple(dict.fromkeys((*tags([label], f"{where}.label"), *tags(block.get("tags"), f"{where}.tags")))),
        metadata=with_provenance(own, KIND, provenance, where, warnings),
        created_at=created,
        updated_at=timestamp(block.get("updated_at"), f"{where}.updated_at") or created,
        agent=engram_agent,
        fields={"content": ".value", "key": ".label"},
        what=f"the {label!r} block of {agent}",
    )


def read_passage(passage: Any, where: str, agent: str, engram_agent: str | None, warnings: list[str]) -> Record:
    if not isinstance(passage, Mapping):
        raise wrong_type(where, passage, "an archival passage object")
    text = passage.get("text")
    if not isinstance(text, str) or not text.strip():
        raise wrong_value(f"{where}.text", text, "the passage's text")
    passage_id = optional_text(passage.get("id"), f"{where}.id")
    own = metadata(passage.get("metadata", passage.get("metadata_")), f"{where}.metadata")
    provenance = {"agent": agent, **({"passage": passage_id} if passage_id else {})}
    created = timestamp(passage.get("created_at"), f"{where}.created_at")
    return Record(
        source_id=f"passage:{passage_id}" if passage_id else f"passage:{hashlib.sha256(text.encode()).hexdigest()}",
        where=where,
        content=text,
        category=Category.KNOWLEDGE,
        tags=tags(passage.get("tags"), f"{where}.tags"),
        metadata=with_provenance(own, KIND, provenance, where, warnings),
        created_at=created,
        updated_at=timestamp(passage.get("updated_at"), f"{where}.updated_at") or created,
        agent=engram_agent,
        id_field="id" if passage_id else None,
        fields={"content": ".text"},
    )
