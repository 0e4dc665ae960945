"""The messages domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from officehub.contacts.hooks import ContactErasing, contact_erasing
from officehub.conversations.hooks import ConversationsErasing, conversations_erasing
from officehub.inboxes.hooks import away_message_checking
from officehub.messages import repository
from officehub.messages.auto_replies import check_away_message


def stored_file_key(link: str) -> str | None:
    """The storage key of one of this service's ``/media/{key}`` links, else None."""
    path = urlsplit(link).path
    marker = path.find("/media/")
    return unquote(path[marker + len("/media/") :]) if marker >= 0 else None


def _inbound_media(office_id: str, links: list[tuple[str, str]]) -> set[str]:
    """The storage keys of the inbound media (``inbound-media/<office>/<message>/…``,
    fetched from the channel) among these ``(message id, media URL)`` links."""
    keys: set[str] = set()
    for message_id, link in links:
        key = stored_file_key(link)
        if key is not None and key.startswith(f"inbound-media/{office_id}/{message_id}/"):
            keys.add(key)
    return keys


async def name_media_of_erased_contact(event: ContactErasing) -> None:
    """Erasure: the stored inbound media of the person's conversations' messages."""
    links = await repository.media_links_of(event.session, event.office_id, event.contact_id)
    event.files.update(_inbound_media(event.office_id, links))


async def name_media_of_erased_conversations(event: ConversationsErasing) -> None:
    """Retention: the stored inbound media of the erased conversations' messages."""
    links = await repository.media_links_of_conversations(
        event.session, event.office_id, event.conversation_ids
    )
    event.files.update(_inbound_media(event.office_id, links))


def install() -> None:
    """Subscribes messages to its hooks; calling it again changes nothing."""
    away_message_checking.subscribe(check_away_message)
    contact_erasing.subscribe(name_media_of_erased_contact)
    conversations_erasing.subscribe(name_media_of_erased_conversations)
