"""The router every API module uses: FastAPI's, without response models inferred from return types.

A route annotated ``-> dict[str, Any]`` gets a response model of that type, and FastAPI checks
each sync route's answer against it on a worker thread of its own: a second hand-off per request
that checks nothing (the presenters build every answer). Routes that name a ``response_model``
keep it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.datastructures import DefaultPlaceholder


class Router(APIRouter):
    def add_api_route(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if isinstance(kwargs.get("response_model"), DefaultPlaceholder) or "response_model" not in kwargs:
            kwargs["response_model"] = None
        super().add_api_route(path, endpoint, **kwargs)
