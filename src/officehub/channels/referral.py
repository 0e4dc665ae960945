"""A Click-to-WhatsApp ad's referral, as the CRM card's ``leadOrigin``.

The platform attaches ``referral`` to the message a client sends from an ad (or a post):
its source type and id, headline, body, media and URL. The card keeps the spec's keys:
``source`` (``ctwa_ad`` or ``ctwa_post``), ``campaignName`` (the headline, else the
source id), ``adContent`` (the body), ``thumbnailUrl`` (the thumbnail, else the image),
``adUrl`` (the source URL), ``conversionMessage`` (what the client wrote) and
``messageAt``. The ids the card has no key for (source id, click id, media type, image
and video URLs) are kept on the message's payload as ``referral``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from officehub.channels.schemas import PlatformMessage, Referral
from officehub.kit.timeutil import isoformat, utcnow

_CONTROLS = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]")
_MAX = 2000


def _line(value: object) -> str | None:
    """One line: whitespace runs (line breaks too) become one space; controls dropped."""
    if value is None or isinstance(value, dict | list):
        return None
    text = " ".join(_CONTROLS.sub("", str(value)).split())[:_MAX]
    return text or None


def _long(value: object) -> str | None:
    if value is None or isinstance(value, dict | list):
        return None
    text = _CONTROLS.sub("", str(value)).strip()[:_MAX]
    return text or None


def _url(value: object) -> str | None:
    text = _line(value)
    return text if text and text.lower().startswith(("https://", "http://")) else None


def _sent_at(message: PlatformMessage) -> str:
    try:
        return isoformat(datetime.fromtimestamp(int(str(message.timestamp)), UTC))
    except (TypeError, ValueError, OverflowError, OSError):
        return isoformat(utcnow())


def lead_origin(message: PlatformMessage, referral: Referral, text: str | None) -> dict[str, Any]:
    kind = (_line(referral.source_type) or "unknown").lower().replace(" ", "_")[:32]
    return {
        "source": f"ctwa_{kind}",
        "campaignName": _line(referral.headline) or _line(referral.source_id),
        "adContent": _long(referral.body),
        "thumbnailUrl": _url(referral.thumbnail_url) or _url(referral.image_url),
        "adUrl": _url(referral.source_url),
        "conversionMessage": _long(text),
        "messageAt": _sent_at(message),
    }


def referral_payload(referral: Referral) -> dict[str, Any]:
    """The referral's ids and media, for the message's payload (nulls left out)."""
    fields = {
        "sourceType": _line(referral.source_type),
        "sourceId": _line(referral.source_id),
        "sourceUrl": _url(referral.source_url),
        "mediaType": _line(referral.media_type),
        "imageUrl": _url(referral.image_url),
        "videoUrl": _url(referral.video_url),
        "thumbnailUrl": _url(referral.thumbnail_url),
        "ctwaClid": _line(referral.ctwa_clid),
    }
    return {k: v[:512] for k, v in fields.items() if v}
