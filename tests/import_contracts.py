"""Import-linter contract types of our own (registered in pyproject's [tool.importlinter]).

`domain_models`: a domain's tables are read and written through its own modules. A module of
domain X (a package `officehub.X` with a `models` module) imports another domain's
`officehub.Y.models` only from `officehub.X.models` (foreign keys, relationships) or
`officehub.X.repository` (the queries that join across domains, in one place). Imports under
`if TYPE_CHECKING:` (annotations) are allowed; modules outside every domain (the aggregators
`officehub.models`, `officehub.migrations`, the app, the CLI, the wiring) are not checked.
Direct imports only: that a service calls its repository, which imports another domain's
models, is the point. Named exceptions (`"importer -> imported"`) are listed in the contract
with their reason; one that no longer matches an import breaks the contract, so the list
only shrinks.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import grimp
from importlinter import Contract, ContractCheck, fields, output


@dataclass(frozen=True)
class _Illegal:
    importer: str
    imported: str
    line_numbers: tuple[int, ...]


def _module_path(module: str) -> Path | None:
    root, _, rest = module.partition(".")
    spec = importlib.util.find_spec(root)
    if spec is None or not spec.submodule_search_locations:
        return None
    base = Path(next(iter(spec.submodule_search_locations)))
    parts = rest.split(".") if rest else []
    as_file = base.joinpath(*parts).with_suffix(".py") if parts else base / "__init__.py"
    if as_file.is_file():
        return as_file
    as_package = base.joinpath(*parts, "__init__.py")
    return as_package if as_package.is_file() else None


def _type_checking_lines(path: Path) -> set[int]:
    """The line numbers inside `if TYPE_CHECKING:` blocks (not their `else:`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        name = (
            test.id
            if isinstance(test, ast.Name)
            else test.attr
            if isinstance(test, ast.Attribute)
            else None
        )
        if name != "TYPE_CHECKING":
            continue
        for statement in node.body:
            end = statement.end_lineno or statement.lineno
            lines.update(range(statement.lineno, end + 1))
    return lines


def _domain_of(module: str, domains: set[str]) -> str | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    candidate = ".".join(parts[:2])
    return candidate if candidate in domains else None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


class DomainModelsContract(Contract):
    """No domain module but `X.models` and `X.repository` imports another domain's models.

    Configuration options:
        - root_package:  the package whose subpackages with a `models` module are domains.
        - outside_domains: subpackages that are not domains (infrastructure, aggregators).
        - exceptions:    "importer -> imported" pairs allowed for now (each with its reason
                         in a comment); one that matches no import breaks the contract.
    """

    type_name = "domain_models"

    root_package = fields.StringField()
    outside_domains = fields.SetField(subfield=fields.StringField(), required=False)
    exceptions = fields.SetField(subfield=fields.StringField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        root = str(self.root_package)
        exceptions: set[tuple[str, str]] = set()
        for raw in cast("set[str] | None", self.exceptions) or set():
            importer, _, imported = str(raw).partition("->")
            exceptions.add((importer.strip(), imported.strip()))
        outside = set(cast("set[str] | None", self.outside_domains) or set())
        # Every subpackage of the root is a domain (even one without tables of its own, like
        # the dashboard or the client export), but the infrastructure and the aggregators.
        domains = {
            module.rpartition(".")[0]
            for module in graph.modules
            if module.count(".") == 2 and module.startswith(root + ".")
        } - outside
        illegal: list[_Illegal] = []
        used: set[tuple[str, str]] = set()
        type_checking: dict[str, set[int]] = {}
        for domain in sorted(domains):
            models = f"{domain}.models"
            targets = [m for m in graph.modules if _within(m, models)]
            if not targets:
                continue
            for target in sorted(targets):
                for importer in sorted(graph.find_modules_that_directly_import(target)):
                    home = _domain_of(importer, domains)
                    if home is None or home == domain:
                        continue
                    if _within(importer, f"{home}.models") or _within(
                        importer, f"{home}.repository"
                    ):
                        continue
                    details = graph.get_import_details(importer=importer, imported=target)
                    lines = tuple(sorted({int(d["line_number"]) for d in details}))
                    if importer not in type_checking:
                        path = _module_path(importer)
                        type_checking[importer] = (
                            _type_checking_lines(path) if path is not None else set()
                        )
                    runtime_lines = tuple(n for n in lines if n not in type_checking[importer])
                    if not runtime_lines:
                        output.verbose_print(verbose, f"{importer} -> {target}: TYPE_CHECKING")
                        continue
                    if (importer, target) in exceptions:
                        used.add((importer, target))
                        continue
                    illegal.append(_Illegal(importer, target, runtime_lines))
        stale = sorted(exceptions - used)
        return ContractCheck(
            kept=not illegal and not stale,
            metadata={"illegal": illegal, "stale": stale},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        illegal: list[_Illegal] = check.metadata["illegal"]
        stale: list[tuple[str, str]] = check.metadata["stale"]
        if illegal:
            output.print_error(
                "Modules that import another domain's models (read through that domain's "
                "repository, or move the query into this domain's repository):",
                bold=False,
            )
            output.new_line()
            for item in illegal:
                lines = ", ".join(map(str, item.line_numbers))
                output.print_error(f"- {item.importer} -> {item.imported} (l.{lines})", bold=False)
            output.new_line()
        if stale:
            output.print_error(
                "Exceptions that match no import any more (delete them from the contract):",
                bold=False,
            )
            output.new_line()
            for importer, imported in stale:
                output.print_error(f"- {importer} -> {imported}", bold=False)
            output.new_line()
