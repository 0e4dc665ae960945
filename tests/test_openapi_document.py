"""The OpenAPI document is built once per process for the apps with the same documented
routes (``officehub.app._shared_openapi``); each app has a copy of its own."""

from __future__ import annotations

import copy

from officehub.app import create_app
from officehub.kit.config import Settings


async def test_apps_with_the_same_routes_serve_equal_documents_each_its_own_copy(
    settings: Settings,
) -> None:
    first, second = create_app(settings), create_app(settings)
    document = first.openapi()
    untouched = copy.deepcopy(document)
    assert len(document["paths"]) >= 100
    assert second.openapi() == document and second.openapi() is not document
    document["paths"].clear()
    document["info"]["title"] = "changed"
    assert second.openapi() == untouched
    assert create_app(settings).openapi() == untouched


async def test_an_app_with_another_documented_route_gets_a_document_naming_it(
    settings: Settings,
) -> None:
    plain = create_app(settings).openapi()
    extended = create_app(settings)

    @extended.get("/only-in-this-app", operation_id="onlyInThisApp")
    async def only_in_this_app() -> dict[str, str]:
        return {}

    document = extended.openapi()
    assert "/only-in-this-app" in document["paths"]
    assert "/only-in-this-app" not in plain["paths"]
    assert "/only-in-this-app" not in create_app(settings).openapi()["paths"]
