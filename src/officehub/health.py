from __future__ import annotations

from fastapi import Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import text

from officehub.kit.indexed_router import Router
from officehub.kit.middleware import retry_after_of
from officehub.kit.schemas import ApiModel

router = Router(tags=["Operations"])


class Health(ApiModel):
    status: str


@router.get("/healthz", response_model=Health, summary="The process is up (no key needed)")
async def healthz() -> Health:
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Health,
    responses={
        503: {
            "model": Health,
            "description": "Database unreachable (answered within the database timeouts)",
            "headers": {
                "Retry-After": {
                    "description": "Seconds before asking again",
                    "schema": {"type": "integer"},
                }
            },
        }
    },
    summary="The database answers (no key needed)",
)
async def readyz(request: Request, response: Response) -> Health:
    """503 (with ``Retry-After``) within the database timeouts when it does not answer: a
    pool checkout, a connect and a statement each wait at most their timeout."""
    try:
        async with request.app.state.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except Exception:
        response.status_code = 503
        response.headers["Retry-After"] = str(retry_after_of(request.scope))
        return Health(status="unavailable")
    return Health(status="ok")


@router.get("/metrics", summary="Prometheus metrics (no key needed)", response_class=Response)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
