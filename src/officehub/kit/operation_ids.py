"""Each operation's ``operationId``: short, stable camelCase, the name an SDK gives it.

FastAPI's default (``create_tag_tag_post``) joins the function, the path and the method.
Ours is the route function's name in camelCase, ``read`` said ``get`` (``createTag``,
``listTags``, ``getTag``, ``updateTag``, ``deleteTag``); where two domains use the same
function name, or the name alone says too little, ``OVERRIDES`` names the operation.
Renaming a route function renames its operation: the test of the document keeps every id
unique and camelCase.
"""

from __future__ import annotations

from fastapi.routing import APIRoute

OVERRIDES: dict[tuple[str, str], str] = {
    ("GET", "/healthz"): "getHealth",
    ("GET", "/readyz"): "getReadiness",
    ("GET", "/metrics"): "getMetrics",
    ("GET", "/webhooks/{webhookId}/deliveries"): "listWebhookDeliveries",
    ("GET", "/webhooks/{webhookId}/deliveries/{deliveryId}"): "getWebhookDelivery",
    ("POST", "/webhooks/deliveries/{deliveryId}/retry"): "retryWebhookDelivery",
    ("POST", "/webhooks/{webhookId}/test"): "sendWebhookTest",
    ("GET", "/automation-rules/{id}/deliveries"): "listRuleDeliveries",
    ("GET", "/automation-rules/{id}/runs"): "listRuleRuns",
    ("GET", "/flow/{id}/deliveries"): "listFlowDeliveries",
    ("POST", "/conversation/{id}/tags"): "addConversationTag",
    ("DELETE", "/conversation/{id}/tags/{tagId}"): "removeConversationTag",
    ("POST", "/conversation/note"): "addConversationNote",
    ("GET", "/conversation/notes"): "listConversationNotes",
    ("POST", "/integration/partner/contacts/{contactId}/link"): "createPartnerLink",
    ("GET", "/integration/partner/contacts/{contactId}/link"): "getPartnerLink",
    ("DELETE", "/integration/partner/contacts/{contactId}/link/{linkId}"): "deletePartnerLink",
    ("GET", "/funnel-column-card/person/{personId}/conversation/{conversationId}"): (
        "getCardOfConversation"
    ),
    ("GET", "/channels/whatsapp/{integrationId}/webhook"): "verifyWhatsappWebhook",
    ("POST", "/channels/whatsapp/{integrationId}/webhook"): "receiveWhatsappNotification",
    ("POST", "/channels/bridge/{integrationId}/inbound"): "receiveBridgeMessage",
    ("GET", "/webchat/{integrationId}/widget.js"): "getWebchatWidget",
    ("POST", "/webchat/{integrationId}/start"): "startWebchat",
    ("POST", "/webchat/{integrationId}/messages"): "sendWebchatMessage",
    ("GET", "/webchat/{integrationId}/messages"): "listWebchatMessages",
    ("GET", "/webchat/{integrationId}/events"): "streamWebchatEvents",
    ("GET", "/media/{key}"): "getMedia",
}


def operation_id(route: APIRoute) -> str:
    """``generate_unique_id_function`` of the app (also names a route's body schema)."""
    for method in sorted(route.methods or ()):
        named = OVERRIDES.get((method, route.path))
        if named is not None:
            return named
    words = route.name.split("_")
    if words[0] == "read":
        words[0] = "get"
    return words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:])
