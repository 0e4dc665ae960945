"""Row claiming is written once, in the kit: ``kit.queue`` (``WorkQueue.claim``, ``take``,
``lock_skipping``) adds ``FOR UPDATE SKIP LOCKED`` on PostgreSQL and takes the SQLite
equivalent. A domain passes its statement (its where and order) and never writes the lock
itself: a ``skip_locked=`` argument or parameter outside ``kit/`` fails here. Docstrings may
still say what the kit does."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "officehub"
KIT = PACKAGE / "kit"


def _skip_locked_in(path: Path) -> list[str]:
    """Where ``path``'s code names ``skip_locked`` (an argument, a parameter, a name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str | None] = []
        if isinstance(node, ast.Call):
            names = [k.arg for k in node.keywords]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        if "skip_locked" in names:
            found.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', '?')}")
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _raw_sql_skip_locked(path: Path) -> list[str]:
    """String literals other than docstrings (and bare string statements, attribute and
    constant documentation) that spell ``SKIP LOCKED``: raw SQL claiming rows."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    documentation = _docstrings(tree) | {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    return [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "SKIP LOCKED" in node.value.upper()
        and id(node) not in documentation
    ]


def _domain_sources() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if KIT not in p.parents]


def test_no_domain_writes_its_own_claim_lock() -> None:
    sources = _domain_sources()
    assert len(sources) > 100, "the package's domains are read"
    offending = [where for path in sources for where in _skip_locked_in(path)]
    offending += [where for path in sources for where in _raw_sql_skip_locked(path)]
    assert offending == []


def test_the_kit_is_where_rows_are_claimed() -> None:
    """The check above finds what it looks for: the kit's queue does name it."""
    queue = KIT / "queue.py"
    assert _skip_locked_in(queue)
