"""The official WhatsApp Cloud API: sends, media downloads, template lists, signatures.

The base URL (``OFFICEHUB_WHATSAPP_API_URL``) is operator configuration; media download
links the platform hands back are fetched through the SSRF-guarded client.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

import httpx

from officehub.channels.adapter import Outbound, SendDeferred, SendRejected
from officehub.kit.outbound import retry_after

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

SIGNATURE_HEADER = "x-hub-signature-256"
# Platform error codes that mean "slow down" even when the HTTP status is 400.
_THROTTLED = {4, 80007, 130429, 131048, 131056}


def signature_valid(app_secret: str, body: bytes, header: str | None) -> bool:
    """``sha256=<hex HMAC-SHA256 of the raw body under the app secret>``, compared in
    constant time."""
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower())


def sign(app_secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def _settings(integration: Integration) -> dict[str, Any]:
    if not integration.whatsapp:
        raise SendRejected("the integration has no WhatsApp settings")
    return integration.whatsapp


def _auth(integration: Integration) -> dict[str, str]:
    return {"Authorization": f"Bearer {_settings(integration)['accessToken']}"}


def platform_error(response: httpx.Response) -> tuple[int | None, str]:
    """The platform's error code and a one-line description of it."""
    try:
        error = response.json().get("error") or {}
    except ValueError:
        error = {}
    if not isinstance(error, dict):
        error = {}
    code = error.get("code")
    message = str(error.get("message") or response.reason_phrase or "error")[:500]
    details = (
        (error.get("error_data") or {}).get("details")
        if isinstance(error.get("error_data"), dict)
        else None
    )
    text = (
        f"{response.status_code} {code}: {message}"
        if code is not None
        else (f"{response.status_code}: {message}")
    )
    if details:
        text += f" ({str(details)[:500]})"
    return (code if isinstance(code, int) else None), text


def raise_for_platform(response: httpx.Response) -> None:
    """2xx passes; 429, 5xx and throttling codes defer; anything else rejects."""
    if response.is_success:
        return
    code, text = platform_error(response)
    if response.status_code == 429 or response.status_code >= 500 or code in _THROTTLED:
        raise SendDeferred(text, retry_after(response.headers.get("retry-after")))
    raise SendRejected(text, code)


def message_body(outbound: Outbound) -> dict[str, Any]:
    """The Cloud API's message object for a stored outbound message, to the phone (``to``)
    or, for a client without one, to the BSUID (``recipient``); a reply carries
    ``context.message_id`` (the platform's id of the message it quotes)."""
    base: dict[str, Any] = {"messaging_product": "whatsapp", "recipient_type": "individual"}
    if outbound.to_phone:
        base["to"] = outbound.to_phone.lstrip("+")
    else:
        # a client known only by their business-scoped user id (a username, no phone)
        base["recipient"] = outbound.to_user_id
    payload = outbound.payload
    if outbound.type == "REACTION":
        return {**base, "type": "reaction", "reaction": dict(payload.get("reaction") or {})}
    quoted = payload.get("replyToExternalId")
    if quoted:
        base["context"] = {"message_id": str(quoted)}
    if "interactive" in payload:
        return {**base, "type": "interactive", "interactive": payload["interactive"]}
    if outbound.type == "TEMPLATE":
        components: list[dict[str, Any]] = []
        header = payload.get("headerFormat")
        if (outbound.media_id or outbound.header_media_link) and header in (
            "IMAGE",
            "VIDEO",
            "DOCUMENT",
        ):
            kind = str(header).lower()
            source = (
                {"id": outbound.media_id}
                if outbound.media_id
                else {"link": outbound.header_media_link}
            )
            components.append({"type": "header", "parameters": [{"type": kind, kind: source}]})
        variables = payload.get("variables") or []
        if variables:
            components.append(
                {
                    "type": "body",
                    "parameters": [{"type": "text", "text": str(v)} for v in variables],
                }
            )
        template: dict[str, Any] = {
            "name": outbound.template_name,
            "language": {"code": payload.get("language")},
        }
        if components:
            template["components"] = components
        return {**base, "type": "template", "template": template}
    if outbound.type == "MEDIA" and outbound.media_url:
        kind = str(payload.get("mediaKind") or "document")
        media: dict[str, Any] = (
            {"id": outbound.media_id} if outbound.media_id else {"link": outbound.media_url}
        )
        if outbound.text and kind not in ("audio", "sticker"):
            media["caption"] = outbound.text
        if kind == "document" and payload.get("fileName"):
            media["filename"] = str(payload["fileName"])
        return {**base, "type": kind, kind: media}
    return {**base, "type": "text", "text": {"body": outbound.text or "", "preview_url": False}}


class WhatsAppAdapter:
    def __init__(self, api_url: str) -> None:
        self.api_url = api_url.rstrip("/")

    async def send(
        self, client: httpx.AsyncClient, integration: Integration, outbound: Outbound
    ) -> str:
        return await self.send_body(client, integration, message_body(outbound))

    async def send_body(
        self, client: httpx.AsyncClient, integration: Integration, body: dict[str, Any]
    ) -> str:
        """Sends a Cloud API message object as given (not a stored message: a one-time
        code) and answers the platform's message id."""
        settings = _settings(integration)
        url = f"{self.api_url}/{settings['phoneNumberId']}/messages"
        try:
            response = await client.post(url, json=body, headers=_auth(integration))
        except httpx.HTTPError as exc:
            raise SendDeferred(f"platform unreachable: {type(exc).__name__}") from exc
        raise_for_platform(response)
        try:
            return str(response.json()["messages"][0]["id"])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise SendDeferred("the platform's answer carried no message id") from exc

    async def upload_media(
        self,
        client: httpx.AsyncClient,
        integration: Integration,
        content: bytes,
        file_name: str,
        mime: str,
    ) -> str:
        """Uploads a file through the media API (``POST /{phoneNumberId}/media``, multipart
        ``file``, ``type``, ``messaging_product``) and answers the platform's media id."""
        settings = _settings(integration)
        url = f"{self.api_url}/{settings['phoneNumberId']}/media"
        try:
            response = await client.post(
                url,
                data={"messaging_product": "whatsapp", "type": mime},
                files={"file": (file_name, content, mime)},
                headers=_auth(integration),
            )
        except httpx.HTTPError as exc:
            raise SendDeferred(f"platform unreachable: {type(exc).__name__}") from exc
        raise_for_platform(response)
        try:
            return str(response.json()["id"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SendDeferred("the platform's media answer carried no id") from exc

    async def mark_read(
        self, client: httpx.AsyncClient, integration: Integration, external_id: str
    ) -> None:
        """Tells the platform the client's message ``external_id`` (and every earlier one)
        was read, with the typing indicator: the client sees the blue ticks and "typing…"
        (for up to 25 seconds, or until the reply arrives) when a person opened the
        conversation."""
        settings = _settings(integration)
        url = f"{self.api_url}/{settings['phoneNumberId']}/messages"
        body = {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": external_id,
            "typing_indicator": {"type": "text"},
        }
        try:
            response = await client.post(url, json=body, headers=_auth(integration))
        except httpx.HTTPError as exc:
            raise SendDeferred(f"platform unreachable: {type(exc).__name__}") from exc
        raise_for_platform(response)

    async def media_link(
        self, client: httpx.AsyncClient, integration: Integration, media_id: str
    ) -> tuple[str, str | None]:
        """The short-lived download URL of an inbound media and its MIME type."""
        try:
            response = await client.get(f"{self.api_url}/{media_id}", headers=_auth(integration))
        except httpx.HTTPError as exc:
            raise SendDeferred(f"platform unreachable: {type(exc).__name__}") from exc
        raise_for_platform(response)
        try:
            body = response.json()
            return str(body["url"]), body.get("mime_type")
        except (ValueError, KeyError, TypeError) as exc:
            raise SendRejected("the platform's media answer carried no url") from exc

    async def template_page(
        self, client: httpx.AsyncClient, integration: Integration, url: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the business account's templates (the first when ``url`` is None)
        and the next page's URL; a ``paging.next`` off the platform's host is not followed."""
        settings = _settings(integration)
        params: dict[str, str] | None = None
        if url is None:
            url = f"{self.api_url}/{settings['businessAccountId']}/message_templates"
            params = {"limit": "100"}
        try:
            response = await client.get(url, params=params, headers=_auth(integration))
        except httpx.HTTPError as exc:
            raise SendDeferred(f"platform unreachable: {type(exc).__name__}") from exc
        raise_for_platform(response)
        try:
            body = response.json()
            data = [t for t in body.get("data") or [] if isinstance(t, dict)]
            following = (body.get("paging") or {}).get("next")
        except (ValueError, AttributeError) as exc:
            raise SendRejected("the platform's template list is malformed") from exc
        if not isinstance(following, str) or not self._same_origin(following):
            following = None
        return data, following

    def _same_origin(self, url: str) -> bool:
        ours, theirs = httpx.URL(self.api_url), httpx.URL(url)
        return (ours.scheme, ours.host, ours.port) == (theirs.scheme, theirs.host, theirs.port)
