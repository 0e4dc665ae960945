"""One value per single-valued query parameter, on every route.

Starlette keeps every value of a repeated parameter and FastAPI reads the last one of a
scalar: ``GET /people?search=a&search=b`` would search for ``b`` alone, silently. A
repeated parameter the route declares as a scalar is refused with 400 naming it; list
parameters (``tagIds``) take many values as declared. The check is an app-wide
dependency, so a route added later is covered without a line of its own.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from officehub.auth import KeyOutcome
from officehub.errors import ValidationFailed

_SCALARS_OF = "query_scalars"


def _is_list(annotation: object) -> bool:
    """A list, set or tuple annotation, bare or inside ``Optional``/``Annotated``."""
    origin = getattr(annotation, "__origin__", None)
    if origin in (list, set, frozenset, tuple):
        return True
    return any(_is_list(arg) for arg in getattr(annotation, "__args__", ()))


def _query_fields(dependant: Dependant) -> Iterator[tuple[str, object]]:
    """(alias, annotation) of every query parameter of the dependant and its dependencies;
    a parameter model (``Annotated[Model, Query()]``) stands for its fields."""
    for field in dependant.query_params:
        annotation = field.field_info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            for name, sub in annotation.model_fields.items():
                yield sub.alias or name, sub.annotation
        else:
            yield field.alias, annotation
    for sub_dependant in dependant.dependencies:
        yield from _query_fields(sub_dependant)


def scalar_query_params(route: APIRoute) -> frozenset[str]:
    """The names (aliases) of the route's query parameters that take one value."""
    cached: frozenset[str] | None = getattr(route, _SCALARS_OF, None)
    if cached is None:
        cached = frozenset(
            alias
            for alias, annotation in _query_fields(route.dependant)
            if not _is_list(annotation)
        )
        setattr(route, _SCALARS_OF, cached)
    return cached


async def refuse_repeated_query_params(request: Request) -> None:
    """400 when a single-valued query parameter of the route is given more than once."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    outcome = request.scope.get("state", {}).get("key")
    if isinstance(outcome, KeyOutcome) and outcome.office is None:
        return  # a bad key is answered 401 first, by the route's own OfficeDep
    params = request.query_params
    repeated = sorted(name for name in scalar_query_params(route) if len(params.getlist(name)) > 1)
    if repeated:
        paths = ", ".join(f"query.{name}" for name in repeated)
        raise ValidationFailed(
            f"Invalid request: {paths}",
            details="; ".join(
                f"query.{name}: given {len(params.getlist(name))} times, takes one value"
                for name in repeated
            ),
        )
