"""The console speaks Portuguese first: one catalogue per language with the same keys, no
people-facing text outside them, Brazilian dates in the office's time zone, English
chosen from the menu and kept."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from officehub.kit.config import Settings

STATIC = Path(__file__).resolve().parent.parent / "src/officehub/console/static"
CATALOGUES = {"pt-BR": "strings.pt-BR.js", "en": "strings.en.js"}
TIMEOUT = 10_000

# Literals that read like words but are not for people: time zones, header names, browser
# APIs and key names.
ALLOWED_LITERALS = {
    "America/Sao_Paulo",
    "X-CSRF-Token",
    "Content-Type",
    "Notification",
    "Enter",
    "Escape",
}


def catalogue(language: str) -> dict[str, str | dict[str, str]]:
    text = (STATIC / CATALOGUES[language]).read_text(encoding="utf-8")
    body = text[text.index("export default ") + len("export default ") :].strip()
    loaded: dict[str, str | dict[str, str]] = json.loads(body.removesuffix(";"))
    return loaded


def scripts() -> dict[str, str]:
    """The console's own scripts: not the catalogues, not the vendored libraries."""
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(STATIC.glob("*.js"))
        if path.name not in CATALOGUES.values() and not path.name.startswith("vendor-")
    }


def literals(source: str) -> list[str]:
    """The string literals of a script: "…", '…' and the text parts of `…` templates (the
    `${…}` expressions scanned as code, so templates nested in them are read too), comments
    left out. A template's markup (htm's html`<p class="x">…</p>`) gives its text between
    tags and its people-facing attributes, not its tag and attribute names."""
    found: list[str] = []
    _scan(source, 0, found, closing="")
    return [piece for literal in found for piece in _texts_of(literal)]


def _scan(source: str, at: int, found: list[str], closing: str) -> int:
    """Read code from `at` until `closing` ("}" of a `${`, or the end) at depth 0."""
    depth = 0
    while at < len(source):
        char = source[at]
        if source.startswith("//", at):
            at = source.find("\n", at)
            at = len(source) if at < 0 else at
        elif source.startswith("/*", at):
            at = source.find("*/", at + 2) + 2
        elif char in "\"'":
            end = at + 1
            while end < len(source) and source[end] not in (char, "\n"):
                end += 2 if source[end] == "\\" else 1
            found.append(source[at + 1 : end])
            at = end + 1
        elif char == "`":
            at = _template(source, at + 1, found)
        elif char == "{":
            depth += 1
            at += 1
        elif char == "}":
            if depth == 0 and closing == "}":
                return at + 1
            depth -= 1
            at += 1
        else:
            at += 1
    return at


def _template(source: str, at: int, found: list[str]) -> int:
    """A template literal from after its "`": its text parts joined by a space where an
    expression stood; the expressions are scanned as code."""
    parts: list[str] = []
    start = at
    while at < len(source):
        if source[at] == "\\":
            at += 2
        elif source[at] == "`":
            parts.append(source[start:at])
            found.append(" ".join(parts))
            return at + 1
        elif source.startswith("${", at):
            parts.append(source[start:at])
            at = _scan(source, at + 2, found, closing="}")
            start = at
        else:
            at += 1
    return at


PEOPLE_ATTRIBUTES = re.compile(r'\b(?:aria-label|title|placeholder|alt)\s*=\s*"([^"]*)"')


def _texts_of(literal: str) -> list[str]:
    if not re.search(r"<[a-zA-Z/][^>]*>", literal):
        return [literal]
    texts = PEOPLE_ATTRIBUTES.findall(literal)
    texts += [text for text in re.split(r"<[^>]*>", literal) if text.strip()]
    return texts


def reads_like_words(literal: str) -> bool:
    """Capitalised words ("Reply") or two words of letters ("no phone"), outside what is
    CSS classes, selectors, media types or header names."""
    if literal in ALLOWED_LITERALS:
        return False
    if re.search(r"(?<![\w.$#/-])[A-ZÀ-Ý][a-zà-ÿ]+\b", literal):
        return True
    words = re.findall(r"(?<![\w.#\[=/-])[a-zà-ÿ]{2,}(?![\w\]=(/-])", literal)
    return len(words) >= 2 and not set(words) <= css_classes()


def css_classes() -> set[str]:
    css = (STATIC / "console.css").read_text(encoding="utf-8")
    return set(re.findall(r"\.([a-z][a-z0-9-]*)", css)) | {"true", "false"}


def test_both_catalogues_have_the_same_keys_and_the_same_places() -> None:
    portuguese, english = catalogue("pt-BR"), catalogue("en")
    assert set(portuguese) == set(english)
    for key, text in portuguese.items():
        other = english[key]
        assert type(text) is type(other), key
        if isinstance(text, dict):
            assert isinstance(other, dict) and set(text) == set(other) == {"one", "other"}, key
            pairs = [(text[form], other[form]) for form in text]
        else:
            assert isinstance(other, str)
            pairs = [(text, other)]
        for one, two in pairs:
            assert set(re.findall(r"\{\w+\}", one)) == set(re.findall(r"\{\w+\}", two)), key


def test_every_key_the_console_uses_is_in_the_catalogue() -> None:
    keys = set(catalogue("pt-BR"))
    used = set()
    for source in scripts().values():
        used |= set(re.findall(r'\bt\("([^"]+)"', source))
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    used |= set(re.findall(r'data-i18n="([^"]+)"', html))
    used |= {
        pair.split(":")[1]
        for attrs in re.findall(r'data-i18n-attr="([^"]+)"', html)
        for pair in attrs.split(";")
    }
    assert used and used <= keys, sorted(used - keys)
    # Keys built from an API's value (t(`message.${status}`)) name every value it has.
    for prefix, values in {
        "message": ["QUEUED", "SENT", "DELIVERED", "READ", "FAILED", "RECEIVED"],
        "conversation": ["OPEN", "CLOSED"],
        "priority": ["LOW", "MEDIUM", "HIGH"],
        "delivery": ["PENDING", "RETRYING", "FAILED", "SUCCESS"],
        "role": ["ADMIN", "SUPERVISOR", "AGENT"],
        "publications.source": ["KIND", "LAWYER"],
        "channel": ["WHATSAPP_OFFICIAL", "WHATSAPP", "INSTAGRAM", "WEBCHAT", "unknown"],
        "type": "TEXT TEMPLATE MEDIA NOTE LOCATION CONTACTS INTERACTIVE ORDER SYSTEM UNSUPPORTED "
        "REACTION".split(),
    }.items():
        assert {f"{prefix}.{value}" for value in values} <= keys, prefix


def test_no_people_facing_string_in_the_scripts_outside_the_catalogues() -> None:
    found = {
        (name, literal)
        for name, source in scripts().items()
        for literal in literals(source)
        if reads_like_words(literal)
    }
    assert not found, sorted(found)


def test_the_scan_catches_a_sentence_and_a_capitalised_label() -> None:
    caught = [literal for literal in literals('h("p", {}, "No cards."); x = `Move ${a}`;')]
    assert [reads_like_words(literal) for literal in caught] == [False, True, True]
    assert not reads_like_words("secondary more") and not reads_like_words("text/plain")
    assert reads_like_words("no phone")
    templated = literals(
        'html`<button type="button" class="secondary">${t("a")}</button>'
        '${rows.map((r) => html`<li title="Open it">${r}</li>`)}<p>No rows</p>`'
    )
    assert [text for text in templated if reads_like_words(text)] == ["Open it", "No rows"]
    assert literals("x = '//' + y; // a comment\ny = \"a // b\";") == ["//", "a // b"]


class _Texts(HTMLParser):
    """Text and people-facing attributes of the page outside a data-i18n element."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[bool] = []
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        for attribute in ("aria-label", "title", "placeholder", "alt"):
            if names.get(attribute):
                self.found.append(f"{tag}[{attribute}]={names[attribute]}")
        if tag not in {"meta", "link", "input", "br", "img"}:
            self.stack.append("data-i18n" in names)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and tag not in {"meta", "link", "input", "br", "img"}:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if data.strip() and data.strip() != "officehub" and not any(self.stack[-1:]):
            self.found.append(data.strip())


def test_the_page_has_no_text_outside_the_catalogue() -> None:
    parser = _Texts()
    parser.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert parser.found == []


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """An office in Manaus (UTC-4, an hour behind São Paulo) shows its own times."""
    return settings.model_copy(update={"time_zone": "America/Manaus"})


async def test_the_console_opens_in_portuguese_with_brazilian_dates_and_english_is_kept(
    page: Page, server_url: str
) -> None:
    await page.goto(f"{server_url}/console")
    await expect(page.get_by_role("heading", name="Entrar")).to_be_visible(timeout=TIMEOUT)
    await expect(page.get_by_label("Senha")).to_be_visible()
    assert await page.evaluate("document.documentElement.lang") == "pt-BR"
    assert await page.title() == "console do officehub"
    formatted = await page.evaluate(
        "import('/console/i18n.js').then((m) => [m.timeZone,"
        " m.formatDateTime('2026-01-02T03:04:00Z'), m.formatDateTime('2026-07-15T15:30:00Z')])"
    )
    assert formatted == ["America/Manaus", "01/01/2026 23:04", "15/07/2026 11:30"]

    await page.get_by_label("Idioma").select_option("en")
    await expect(page.get_by_role("heading", name="Log in")).to_be_visible(timeout=TIMEOUT)
    assert await page.evaluate("document.documentElement.lang") == "en"
    await page.reload()
    await expect(page.get_by_label("Password")).to_be_visible(timeout=TIMEOUT)
    # Dates stay Brazilian in English too: the office is in Brazil.
    again = await page.evaluate(
        "import('/console/i18n.js').then((m) => m.formatDateTime('2026-01-02T03:04:00Z'))"
    )
    assert again == "01/01/2026 23:04"
    await page.get_by_label("Language").select_option("pt-BR")
    await expect(page.get_by_role("heading", name="Entrar")).to_be_visible(timeout=TIMEOUT)
