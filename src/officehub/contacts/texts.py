"""What the service itself says to the office's contacts about their identity and consent
(Portuguese): the refusal an unverified contact gets, the one-time code's message, the web
chat widget's words for verifying a claimed phone, and the answers to an opt-out or opt-in
keyword."""

from __future__ import annotations

UNVERIFIED_REFUSAL = (
    "Por segurança, não podemos informar dados de processos ou atendimentos nesta conversa: "
    "seu contato ainda não foi verificado. Para verificar, toque em “Confirmar meu número” "
    "no chat e digite o código que enviaremos ao seu WhatsApp, ou fale com o escritório pelo "
    "WhatsApp ou e-mail cadastrado."
)

# The free-form message carrying a one-time code (when the office has no authentication
# template): ``{title}`` is the web chat's name, ``{code}`` the six digits, ``{minutes}``
# how long it is valid.
CODE_MESSAGE = (
    "{code} é o seu código para confirmar este número no chat “{title}”. Ele vale por "
    "{minutes} minutos. Se não foi você quem pediu, ignore esta mensagem e não repasse o "
    "código a ninguém."
)

# The widget's words for verifying (handed to the widget in its configuration); the error
# texts are keyed by the API's error codes.
WIDGET = {
    "verifyOffer": "Confirme seu número para receber informações do seu atendimento.",
    "verifyButton": "Confirmar meu número",
    "codeSent": (
        "Enviamos um código de 6 dígitos pelo WhatsApp para o número terminado em {last4}. "
        "Ele vale por {minutes} minutos."
    ),
    "codeLabel": "Código recebido no WhatsApp",
    "confirmButton": "Confirmar",
    "resendButton": "Enviar outro código",
    "verified": "Número confirmado.",
    "WRONG_CODE": "Código incorreto. Confira e tente de novo ({left} tentativa(s) restante(s)).",
    "CODE_EXPIRED": "Este código expirou. Peça outro.",
    "CODE_ATTEMPTS_EXHAUSTED": "Tentativas esgotadas para este código. Peça outro.",
    "CODE_USED": "Este código já foi usado.",
    "NO_CODE_REQUESTED": "Peça um código primeiro.",
    "ALREADY_VERIFIED": "Seu número já está confirmado.",
    "VERIFICATION_UNAVAILABLE": (
        "A confirmação pelo WhatsApp não está disponível neste chat. Peça a um atendente que "
        "confirme seus dados."
    ),
    "RATE_LIMITED": "Muitos pedidos. Aguarde alguns minutos e tente de novo.",
    "PLATFORM_ERROR": "Não foi possível enviar o código agora. Tente de novo em instantes.",
    "failed": "Não foi possível confirmar agora. Tente de novo.",
}

# The one answer to a client's opt-out keyword (``{back}``: the office's first opt-in
# keyword) and to an opt-in keyword (``{out}``: its first opt-out keyword).
OPTED_OUT_ANSWER = (
    "Pronto: você não receberá mais mensagens promocionais deste escritório. As mensagens "
    "sobre o seu atendimento continuam normalmente. Para voltar a receber, envie {back}."
)
OPTED_IN_ANSWER = (
    "Pronto: você voltará a receber mensagens promocionais deste escritório. Para deixar de "
    "receber, envie {out}."
)
