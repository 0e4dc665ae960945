"""Imports every domain's tables so ``Base.metadata`` knows them all (Alembic, tests)."""

from __future__ import annotations

from officehub.accounts.models import UserRecoveryCode, UserSession, UserToken, UserTotp
from officehub.audit.models import AuditEntry
from officehub.automation.models import (
    AutomationPause,
    AutomationRule,
    AutomationRuleConversation,
    AutomationRun,
    CardColumnEntry,
)
from officehub.case_notices.models import CaseNotice, CaseNoticeSettings
from officehub.cases.models import Case
from officehub.channels.models import AccountNotice, ChannelPeer
from officehub.contacts.models import ConsentRecord, Contact, ContactTag, PartnerLink
from officehub.conversations.models import (
    Conversation,
    ConversationNote,
    ConversationRead,
    ConversationTag,
)
from officehub.crm.models import Card, ColumnCount, Funnel, FunnelColumn
from officehub.departments.models import Department
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.evidence.models import EvidenceKey
from officehub.fast_messages.models import FastMessage
from officehub.flows.models import CaseMovement, Flow, FlowSession
from officehub.inboxes.models import Inbox, InboxBusinessHours, Integration
from officehub.kit.job_leases import JobLease
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.legal_areas.models import LegalArea
from officehub.messages.models import Message, ReadReceipt
from officehub.offices.models import ApiKey, Office, OfficeSettings
from officehub.publications.models import CourtHoliday, Lawyer, Publication
from officehub.sla.models import SlaPolicy
from officehub.tags.models import Tag
from officehub.templates.models import WhatsAppTemplate
from officehub.tickets.models import Ticket, TicketAssignee, TicketDepartment, TicketStatus
from officehub.users.models import User, UserInbox, UserLegalArea, UserPresence
from officehub.webchat.models import ClaimCode, WebchatVisitor
from officehub.webhooks.models import Webhook, WebhookDelivery, WebhookDeliveryAttempt

__all__ = [
    "AccountNotice",
    "ApiKey",
    "AuditEntry",
    "AutomationPause",
    "AutomationRule",
    "AutomationRuleConversation",
    "AutomationRun",
    "Card",
    "CardColumnEntry",
    "Case",
    "CaseMovement",
    "CaseNotice",
    "CaseNoticeSettings",
    "ChannelPeer",
    "ClaimCode",
    "ColumnCount",
    "ConsentRecord",
    "ConsumerEvent",
    "Contact",
    "ContactTag",
    "Conversation",
    "ConversationNote",
    "ConversationRead",
    "ConversationTag",
    "CourtHoliday",
    "Department",
    "EvidenceKey",
    "FastMessage",
    "Flow",
    "FlowSession",
    "Funnel",
    "FunnelColumn",
    "Inbox",
    "InboxBusinessHours",
    "Integration",
    "JobLease",
    "Lawyer",
    "LegalArea",
    "Message",
    "Office",
    "OfficeSettings",
    "OutboxEvent",
    "PartnerLink",
    "Publication",
    "ReadReceipt",
    "ScheduledJob",
    "SlaPolicy",
    "Tag",
    "Ticket",
    "TicketAssignee",
    "TicketDepartment",
    "TicketStatus",
    "User",
    "UserInbox",
    "UserLegalArea",
    "UserPresence",
    "UserRecoveryCode",
    "UserSession",
    "UserToken",
    "UserTotp",
    "WebchatVisitor",
    "Webhook",
    "WebhookDelivery",
    "WebhookDeliveryAttempt",
    "WhatsAppTemplate",
]
