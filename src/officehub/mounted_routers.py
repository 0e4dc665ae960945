"""The list of routers the app mounts: every domain's, in the order they are matched."""

from __future__ import annotations

from officehub.accounts.router import router as accounts_router
from officehub.audit.router import router as audit_router
from officehub.automation.router import router as automation_router
from officehub.case_notices.router import router as case_notices_router
from officehub.cases.router import router as cases_router
from officehub.channels.bridge_inbound import router as bridge_router
from officehub.channels.router import router as channels_router
from officehub.client_export.router import router as client_export_router
from officehub.contacts.router import router as contacts_router
from officehub.conversations.router import router as conversations_router
from officehub.crm.router import router as crm_router
from officehub.dashboard.router import router as dashboard_router
from officehub.departments.router import router as departments_router
from officehub.evidence.router import router as evidence_router
from officehub.fast_messages.router import router as fast_messages_router
from officehub.flows.router import router as flows_router
from officehub.inboxes.router import router as inboxes_router
from officehub.kit.indexed_router import Router
from officehub.legal_areas.router import router as legal_areas_router
from officehub.live.router import router as live_router
from officehub.media import router as media_router
from officehub.messages.router import router as messages_router
from officehub.offices.router import router as offices_router
from officehub.partner_links.router import router as partner_links_router
from officehub.publications.router import router as publications_router
from officehub.sla.router import router as sla_router
from officehub.tags.router import router as tags_router
from officehub.templates.router import router as templates_router
from officehub.tickets.router import router as tickets_router
from officehub.users.router import router as users_router
from officehub.webchat.router import router as webchat_router
from officehub.webhooks.router import router as webhooks_router


def domain_routers() -> list[Router]:
    return [
        inboxes_router,
        sla_router,
        departments_router,
        users_router,
        accounts_router,
        tags_router,
        legal_areas_router,
        tickets_router,
        fast_messages_router,
        media_router,
        contacts_router,
        client_export_router,
        templates_router,
        partner_links_router,
        evidence_router,
        offices_router,
        conversations_router,
        messages_router,
        crm_router,
        webhooks_router,
        automation_router,
        flows_router,
        cases_router,
        case_notices_router,
        publications_router,
        channels_router,
        bridge_router,
        webchat_router,
        dashboard_router,
        live_router,
        audit_router,
    ]
