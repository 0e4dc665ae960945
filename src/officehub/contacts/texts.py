"""What the service itself says to the office's contacts about their identity (Portuguese)."""

from __future__ import annotations

UNVERIFIED_REFUSAL = (
    "Por segurança, não podemos informar dados de processos ou atendimentos nesta conversa: "
    "seu contato ainda não foi verificado. Para verificar, fale com o escritório pelo "
    "WhatsApp ou e-mail cadastrado, ou peça a um atendente que confirme seus dados."
)
