"""What a case notice says to the client (Portuguese): the text the lawyer approves."""

from __future__ import annotations

# ``{greeting}``: GREETING with the client's first name, or GREETING_NO_NAME; ``{number}``
# the case number; ``{date}`` the movement's date (dd/mm/aaaa, office time);
# ``{explanation}`` the movement explained.
NOTICE = (
    "{greeting} Há uma novidade no seu processo nº {number}, registrada em {date}: "
    "{explanation} Em caso de dúvida, é só responder esta mensagem."
)
GREETING = "Olá, {first_name}!"
GREETING_NO_NAME = "Olá!"
NO_NAME = "cliente"
"""The template's first-name placeholder when the contact has no name."""
