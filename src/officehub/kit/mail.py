"""E-mail to people of an office, through the mail server the operator names
(``OFFICEHUB_SMTP_URL``); the standard library's SMTP client in a thread.

``smtp://user:password@host:587`` sends with STARTTLS when the server offers it (and the
credentials only over TLS, as smtplib does); ``smtps://…:465`` is TLS from the start. The
URL is the operator's setting, never an office's, so it is not checked against private
addresses. Messages are plain text, UTF-8."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from officehub.kit.config import Settings

SMTP_TIMEOUT_SECONDS = 20.0


class MailNotConfigured(Exception):
    """``OFFICEHUB_SMTP_URL`` is empty: the service sends no e-mail."""


@dataclass(frozen=True)
class MailServer:
    host: str
    port: int
    tls: bool
    user: str | None
    password: str | None

    @classmethod
    def from_url(cls, url: str) -> MailServer:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("OFFICEHUB_SMTP_URL must be smtp://host[:port] or smtps://host[:port]")
        tls = parts.scheme == "smtps"
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if tls else 587),
            tls=tls,
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


def message(sender: str, to: str, subject: str, body: str) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail.set_content(body)
    return mail


async def send(settings: Settings, mails: list[EmailMessage]) -> None:
    """Sends ``mails`` in one SMTP session; raises ``MailNotConfigured`` without a server,
    and the server's error when it refuses (the caller's job is then retried)."""
    if not settings.smtp_url:
        raise MailNotConfigured
    server = MailServer.from_url(settings.smtp_url)
    await asyncio.to_thread(_send, server, mails)


def _send(server: MailServer, mails: list[EmailMessage]) -> None:
    context = ssl.create_default_context()
    client: smtplib.SMTP
    if server.tls:
        client = smtplib.SMTP_SSL(
            server.host, server.port, timeout=SMTP_TIMEOUT_SECONDS, context=context
        )
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=SMTP_TIMEOUT_SECONDS)
    with client:
        client.ehlo()
        secure = server.tls
        if not server.tls and client.has_extn("starttls"):
            client.starttls(context=context)
            client.ehlo()
            secure = True
        if server.user is not None:
            if not secure:
                raise smtplib.SMTPException(
                    "the mail server offers no TLS: its credentials are not sent in clear"
                )
            client.login(server.user, server.password or "")
        for mail in mails:
            client.send_message(mail)
