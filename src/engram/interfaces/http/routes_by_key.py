"""``/api/v1/memory/by-key?key=``: the single-memory routes with the key in the query string.

A key may hold anything (slashes, ``%``, spaces, a fixed route's name such as ``search``), and a
query parameter carries any text unambiguously, so these always reach the memory with that key,
looked up by key alone (``Engram.get_by_key``: never a memory whose id the key happens to equal).
Each route finds the memory, then does what its ``/{ref}`` twin in ``routes_memory`` does with its id,
passing the memory itself, which the engine takes as found instead of reading it again.
Registered before ``routes_memory``, whose ``/{ref}`` would otherwise take ``by-key`` for a key.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from engram.interfaces import present
from engram.interfaces.http import routes_memory as by_ref
from engram.interfaces.http.routes_memory import NAMED, Eng, Erase, LinkLimit, Reason
from engram.interfaces.http.routing import Router
from engram.interfaces.http.schemas import LinkIn, MemoryPatch, MemoryReplace, SupersedeIn

router = Router(prefix="/api/v1/memory/by-key", tags=["memory"])
Key = Annotated[str, Query(min_length=1, max_length=1000, description="The memory's key, exactly as stored.")]


@router.get("", summary="One memory by key (any key)", responses=NAMED)
def read(eng: Eng, key: Key) -> dict[str, Any]:
    return present.memory_dict(eng.get_by_key(key))


@router.patch("", summary="Change the fields sent of the memory with this key (null clears one)", responses=NAMED)
def patch(eng: Eng, key: Key, body: MemoryPatch) -> dict[str, Any]:
    return by_ref.patch_memory(eng, eng.get_by_key(key), body)


@router.put("", summary="Replace the memory with this key: fields not sent return to their defaults", responses=NAMED)
def replace(eng: Eng, key: Key, body: MemoryReplace) -> dict[str, Any]:
    return by_ref.replace_memory(eng, eng.get_by_key(key), body)


@router.delete("", summary="Forget the memory with this key, with a reason", responses=NAMED)
def delete(eng: Eng, key: Key, reason: Reason = None, erase: Erase = False) -> dict[str, Any]:
    return by_ref.forget_one(eng, eng.get_by_key(key), reason, erase)


@router.post("/supersede", summary="Mark the memory with this key superseded", responses=NAMED)
def supersede(eng: Eng, key: Key, body: SupersedeIn) -> dict[str, Any]:
    return by_ref.supersede_by(eng, eng.get_by_key(key), body)


@router.get("/versions", summary="Earlier contents of the memory with this key, oldest first", responses=NAMED)
def versions(eng: Eng, key: Key) -> dict[str, Any]:
    return by_ref.versions_of(eng, eng.get_by_key(key))


@router.get("/supersedes", summary="The memory with this key and those it supersedes", responses=NAMED)
def supersedes(eng: Eng, key: Key, limit: LinkLimit = 50) -> dict[str, Any]:
    return by_ref.supersedes_of(eng, eng.get_by_key(key), limit)


@router.get("/links", summary="The memory with this key and its linked neighbours", responses=NAMED)
def links(eng: Eng, key: Key, limit: LinkLimit = 50) -> dict[str, Any]:
    return by_ref.links_of(eng, eng.get_by_key(key), limit)


@router.post("/links", status_code=201, summary="Link the memory with this key to another (both ways)", responses=NAMED)
def add_link(eng: Eng, key: Key, body: LinkIn) -> dict[str, Any]:
    return by_ref.link_to(eng, eng.get_by_key(key), body)


@router.delete("/links", summary="Remove the link between the memory with this key and another (other or other_key)",
               responses=NAMED)
def remove_link(
    eng: Eng, key: Key,
    other: Annotated[str | None, Query(min_length=1, max_length=1000, description="Id or key of the other memory.")] = None,
    other_key: Annotated[str | None, Query(min_length=1, max_length=1000, description=(
        "The other memory's key, always read as a key (for a key that is also another memory's id)."))] = None,
) -> dict[str, Any]:
    memory = eng.get_by_key(key)
    return {"unlinked": eng.unlink(memory, eng.named(other, other_key, field="unlink", names=("other", "other_key")))}
