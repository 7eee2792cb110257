"""Numbers with a range at the doors pydantic validates (HTTP's bodies and queries, MCP's tool
arguments), checked by the engine's own rules (``model.parse_number``, ``model.parse_integer``), so a
value out of range is refused in the words of every door, naming the whole range it may take
(``limit: 0 is out of range (allowed: 1 to 100)``, with ``allowed`` apart at HTTP): pydantic's own
bounds said only the bound crossed ("Input should be greater than or equal to 1") and gave no
``allowed``, and told NaN it "should be less than or equal to 1". The schema still shows the bounds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from engram.errors import ValidationError
from engram.model import (
    MAX_LINK_DEPTH,
    MAX_LIST_LIMIT,
    MAX_OFFSET,
    MAX_RECALL_LIMIT,
    parse_integer,
    parse_number,
    range_words,
)


def _checked(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse`` (raising engram's ``ValidationError``) as a pydantic validator whose error keeps the
    problem and what is allowed apart (``errors.refusal`` reads them back at every door)."""

    def check(value: Any) -> Any:
        try:
            return parse(value)
        except ValidationError as exc:
            raise PydanticCustomError("out_of_range", "{problem} (allowed: {allowed})",
                                      {"problem": exc.problem, "allowed": exc.allowed}) from None

    return check


def _bounds(low: float, high: float | None) -> dict[str, float]:
    return {"minimum": low} | ({"maximum": high} if high is not None else {})


def bounded_number(low: float, high: float | None = None) -> Any:
    """A number from ``low`` to ``high`` (no bound when None); NaN and the infinities are refused
    naming the range, as a value out of it is."""
    allowed = range_words(low, high, whole=False)
    check = _checked(lambda value: parse_number(value, "", allowed, low, high))
    return Annotated[float, AfterValidator(check), WithJsonSchema({"type": "number", **_bounds(low, high)})]


def bounded_integer(low: int, high: int | None = None, base: Any = int) -> Any:
    """A whole number from ``low`` to ``high`` (no bound when None), of the door's own integer type
    ``base`` (HTTP's bodies: ``schemas.WholeNumber``, which takes 5.0 and refuses "5")."""
    check = _checked(lambda value: parse_integer(value, "", low, high))
    return Annotated[base, AfterValidator(check), WithJsonSchema({"type": "integer", **_bounds(low, high)})]


# The engine's bounds of a recall, at every door that takes them.
RecallLimit = bounded_integer(1, MAX_RECALL_LIMIT)
ListLimit = bounded_integer(1, MAX_LIST_LIMIT)  # a list's page, a memory's links
ListOffset = bounded_integer(0, MAX_OFFSET)
LinkDepth = bounded_integer(0, MAX_LINK_DEPTH)
