"""docs/architecture.md names only code that exists, and names all of it.

The map is read by people who then go looking for what it names: a module that moved, a
function renamed or a package added without a line there must fail here, not mislead.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "src" / "officehub"

DOTTED = re.compile(r"\bofficehub(?:\.[A-Za-z_]\w*)+")
SRC_PATH = re.compile(r"\bsrc/[\w./-]*\w")
# A relative file path with at least one folder (``crm/router.py``, ``tests/conftest.py``):
# read from the repository's root or from ``src/officehub``. ``<domain>/router.py`` is a
# pattern, not a path, and is left alone.
RELATIVE_PY = re.compile(r"(?<![\w/<>.-])(\w+(?:/\w+)+\.py)\b")


def _text() -> str:
    return DOC.read_text(encoding="utf-8")


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def resolve(dotted: str) -> str | None:
    """``None`` when ``dotted`` names an existing module, or an attribute of one (a class, a
    function, a constant); else why not."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        module = ".".join(parts[:cut])
        if not _is_module(module):
            continue
        target: object = importlib.import_module(module)
        for i, name in enumerate(parts[cut:], start=cut):
            if not hasattr(target, name):
                return f"{'.'.join(parts[:i])} has no {name!r}"
            target = getattr(target, name)
        return None
    return "no such module"


def test_every_officehub_name_in_the_architecture_map_exists() -> None:
    names = sorted(set(DOTTED.findall(_text())))
    assert len(names) > 50, "the map names the modules it describes"
    missing = {name: why for name in names if (why := resolve(name)) is not None}
    assert missing == {}


def test_every_file_path_in_the_architecture_map_exists() -> None:
    text = _text()
    src_paths = sorted({p.rstrip(".") for p in SRC_PATH.findall(text)})
    relative = sorted(set(RELATIVE_PY.findall(text)) - {p.removeprefix("src/") for p in src_paths})
    assert src_paths and relative
    missing = [p for p in src_paths if not (ROOT / p).exists()]
    missing += [p for p in relative if not ((ROOT / p).exists() or (PACKAGE / p).exists())]
    assert missing == []


def _modules_under(folder: Path, recursive: bool) -> set[str]:
    found = set()
    for path in folder.rglob("*.py") if recursive else folder.glob("*.py"):
        dotted = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if path.stem == "__main__" or "migrations" in path.parts:
            continue
        found.add(dotted.removesuffix(".__init__"))
    if not recursive:
        found |= {f"officehub.{p.name}" for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return found


def test_every_package_root_module_and_kit_module_has_a_place_in_the_architecture_map() -> None:
    named = set(DOTTED.findall(_text()))
    wanted = _modules_under(PACKAGE, recursive=False) - {"officehub"}
    if (PACKAGE / "kit").is_dir():
        wanted |= _modules_under(PACKAGE / "kit", recursive=True)
    unnamed = [m for m in sorted(wanted) if not any(n == m or n.startswith(f"{m}.") for n in named)]
    assert unnamed == []


def test_the_checks_catch_a_wrong_name() -> None:
    # The resolver must not pass everything: a moved module, a renamed function.
    assert resolve("officehub.no_such_module") == "no such module"
    assert resolve("officehub.events.service.no_such_function") is not None
    assert resolve("officehub.events.service.emit") is None


def test_the_map_is_drawn_and_linked() -> None:
    text = _text()
    diagrams = re.findall(r"```mermaid\n(\w+)", text)
    assert len(diagrams) >= 4 and {"flowchart", "sequenceDiagram"} <= set(diagrams)
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    decisions = (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8")
    assert "(architecture.md)" in decisions[:1000]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_to_a_heading_in_decisions_and_architecture_lands_on_one() -> None:
    for name in ("decisions.md", "architecture.md"):
        text = (ROOT / "docs" / name).read_text(encoding="utf-8")
        slugs: set[str] = set()
        for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE):
            slug, n = _slug(heading), 0
            while (slug if n == 0 else f"{slug}-{n}") in slugs:
                n += 1
            slugs.add(slug if n == 0 else f"{slug}-{n}")
        links = set(re.findall(r"\]\(#([^)]+)\)", text))
        assert sorted(links - slugs) == [], name
