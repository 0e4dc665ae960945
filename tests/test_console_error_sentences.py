"""Every error code the API answers has a sentence in the console's catalogues (issue 42):
`ui.showError` says `apiError.<CODE>`, never a bare `401 INVALID_CREDENTIALS`."""

from __future__ import annotations

import re
from pathlib import Path

from officehub.kit.errors import HTTP_CODES
from officehub.kit.integrity import REFERENCE, RULES
from tests.test_console_i18n import catalogue

SRC = Path(__file__).resolve().parent.parent / "src/officehub"
# Named by a constant (``code=INVALID_FLOW_GRAPH``) rather than a literal.
BY_CONSTANT = {
    "INVALID_CASE_NUMBER",
    "COURT_NOT_SUPPORTED",
    "CASE_EXISTS",
    "LAWYER_EXISTS",
    "COURT_HOLIDAY_EXISTS",
    "CASE_NOTICES_TELL_TOO",
    "ELSE_ACTIONS_WITHOUT_CONDITIONS",
    "INVALID_FLOW_GRAPH",
    "SETTINGS_CHANGED",
    "NOTICE_CLOSED",
    "NOTICE_NOT_SENT",
    "NO_CONVERSATION",
    "CONTACT_NOT_VERIFIED",
}
# Answered by the framework's handlers, or made by the console itself.
HANDLERS = {"UNKNOWN_FIELD", "MALFORMED_JSON", "METHOD_NOT_ALLOWED", "NETWORK_ERROR"}
# Not an API answer: the command line's own (no database where it looked).
NOT_API = {"NO_DATABASE"}


def api_error_codes() -> set[str]:
    found: set[str] = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r"\bcode=\"([A-Z_]+)\"", text))
        found |= set(re.findall(r"^\s+code = \"([A-Z_]+)\"$", text, flags=re.M))
    found |= {rule.code for rule in RULES.values()} | {REFERENCE.code}
    found |= set(HTTP_CODES.values())
    return (found | BY_CONSTANT | HANDLERS) - NOT_API


def test_the_scan_finds_the_codes_of_every_kind() -> None:
    codes = api_error_codes()
    for known in ("INVALID_CREDENTIALS", "EMAIL_TAKEN", "SECRETS_UNREADABLE", "PHONE_TAKEN"):
        assert known in codes
    assert len(codes) > 60


def test_every_api_error_code_has_a_sentence_in_both_languages() -> None:
    codes = api_error_codes()
    for language in ("pt-BR", "en"):
        words = catalogue(language)
        missing = sorted(code for code in codes if f"apiError.{code}" not in words)
        assert missing == [], (language, missing)
    portuguese = catalogue("pt-BR")
    assert portuguese["apiError.INVALID_CREDENTIALS"] == (
        "E-mail ou senha incorretos. Confira e tente de novo."
    )
