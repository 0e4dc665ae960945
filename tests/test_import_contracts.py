"""The `domain_models` import-linter contract (tests/import_contracts.py) on a small package
written for the test: what it refuses, what it lets through, and stale exceptions."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest

from tests.import_contracts import DomainModelsContract

FILES = {
    "__init__.py": "",
    "models.py": "from shop.orders import models as orders\nfrom shop.users import models\n",
    "kit/__init__.py": "",
    "kit/db.py": "from shop.users.models import User\n",
    "users/__init__.py": "",
    "users/models.py": "class User: ...\n",
    "orders/__init__.py": "",
    "orders/models.py": "from shop.users.models import User\n\nclass Order: ...\n",
    "orders/repository.py": "from shop.users.models import User\n",
    "orders/typed.py": (
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n    from shop.users.models import User\n"
        "else:\n    User = None\n"
    ),
    "orders/service.py": "import json\n\n\ndef f():\n    from shop.users.models import User\n",
    "reports/__init__.py": "",
    "reports/views.py": "from shop.orders.models import Order\n",
}


@pytest.fixture
def graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[grimp.ImportGraph]:
    for name, text in FILES.items():
        path = tmp_path / "shop" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield grimp.build_graph("shop", cache_dir=None)
    for module in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
        del sys.modules[module]


def _check(graph: grimp.ImportGraph, exceptions: list[str]) -> tuple[bool, list[str], list[str]]:
    contract = DomainModelsContract(
        name="domains",
        session_options={},
        contract_options={
            "root_package": "shop",
            "outside_domains": ["shop.kit"],
            "exceptions": exceptions,
        },
    )
    check = contract.check(graph, verbose=False)
    illegal = [f"{i.importer} -> {i.imported} {i.line_numbers}" for i in check.metadata["illegal"]]
    stale = [f"{a} -> {b}" for a, b in check.metadata["stale"]]
    return check.kept, illegal, stale


def test_only_models_repository_and_annotations_import_another_domains_models(
    graph: grimp.ImportGraph,
) -> None:
    kept, illegal, stale = _check(graph, [])
    # The aggregator (shop.models), the infrastructure (shop.kit), orders.models (a foreign
    # key), orders.repository and orders.typed (under TYPE_CHECKING) are let through; an
    # import inside a function counts, and so does a domain without tables of its own.
    assert (kept, stale) == (False, [])
    assert illegal == [
        "shop.reports.views -> shop.orders.models (1,)",
        "shop.orders.service -> shop.users.models (5,)",
    ]


def test_a_named_exception_lets_one_import_through_and_a_stale_one_breaks_it(
    graph: grimp.ImportGraph,
) -> None:
    both = ["shop.reports.views -> shop.orders.models", "shop.orders.service -> shop.users.models"]
    assert _check(graph, both) == (True, [], [])
    gone = [*both, "shop.orders.typed -> shop.users.models"]
    assert _check(graph, gone) == (False, [], ["shop.orders.typed -> shop.users.models"])
