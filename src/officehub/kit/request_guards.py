"""App-wide request checks FastAPI leaves out, so a route added later is covered too.

One value per single-valued query parameter, on every route.

Starlette keeps every value of a repeated parameter and FastAPI reads the last one of a
scalar: ``GET /people?search=a&search=b`` would search for ``b`` alone, silently. A
repeated parameter the route declares as a scalar is refused with 400 naming it; list
parameters (``tagIds``) take many values as declared.

A JSON body in JSON: a route that reads a JSON body refuses a body of another declared
``Content-Type`` (``text/plain``, a form, XML) with 415, where FastAPI would try to
validate the raw bytes and answer a confusing 400. A body without a ``Content-Type`` is
read as JSON.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from officehub.kit.auth import KeyOutcome
from officehub.kit.errors import UnsupportedMediaType, ValidationFailed

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


def refuse_repeated_query_params(request: Request) -> None:
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


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def refuse_non_json_bodies(request: Request) -> None:
    """415 when a route that reads a JSON body is sent a body of another media type."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute) or route.body_field is None:
        return
    outcome = request.scope.get("state", {}).get("key")
    if isinstance(outcome, KeyOutcome) and outcome.office is None:
        return  # a bad key is answered 401 first, by the route's own OfficeDep
    headers = request.headers
    length = headers.get("content-length", "")
    has_body = "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)
    content_type = headers.get("content-type")
    if has_body and content_type is not None and not _is_json(content_type):
        raise UnsupportedMediaType(
            "Unsupported media type",
            details=f"This route reads a JSON body: send Content-Type application/json, "
            f"not {content_type.split(';', 1)[0].strip()[:100]}",
        )


async def guard_request(request: Request) -> None:
    """Both checks, as the app's one dependency: FastAPI's cost of solving a dependency is
    paid once per request, not twice."""
    refuse_repeated_query_params(request)
    refuse_non_json_bodies(request)
