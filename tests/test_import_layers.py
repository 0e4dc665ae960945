"""The import contract (``[tool.importlinter]`` in pyproject.toml, run by ``make lint``)
states the order of every module: none is left out of it, none of its imports is ignored, and
the outbox (``events``) sits below every consumer that registers with it, so ``events``
importing a consumer package breaks the contract."""

from __future__ import annotations

import pkgutil
import re
import tomllib
from pathlib import Path
from typing import Any

from fastapi import FastAPI

import officehub
from officehub.events import registry

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _contract() -> dict[str, Any]:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "layers"]
    return dict(contract)


def _layers() -> list[set[str]]:
    """Each layer's modules, highest layer first."""
    return [{m.strip() for m in re.split(r"[|:]", layer)} for layer in _contract()["layers"]]


def _layer_of(module: str) -> int | None:
    for index, layer in enumerate(_layers()):
        if any(module == m or module.startswith(f"{m}.") for m in layer):
            return index
    return None


def test_every_module_of_the_package_sits_in_a_layer() -> None:
    listed = {m for layer in _layers() for m in layer}
    modules = [m.name for m in pkgutil.walk_packages(officehub.__path__, "officehub.")]
    # A package some of whose modules sit in different layers holds no code of its own.
    containers = {m for m in modules if any(entry.startswith(f"{m}.") for entry in listed)}
    outside = [m for m in modules if _layer_of(m) is None and m not in containers]
    assert outside == []


def test_the_contract_ignores_no_import() -> None:
    contract = _contract()
    assert "ignore_imports" not in contract


async def test_events_sits_below_every_consumer_registered_with_it(app: FastAPI) -> None:
    events = _layer_of("officehub.events")
    assert events is not None
    consumers = {r.consumer.handle.__module__ for r in registry.registered()}
    assert {m.split(".")[1] for m in consumers} == {"webhooks", "automation", "flows"}
    for module in consumers:
        layer = _layer_of(module)
        assert layer is not None and layer < events, module
