"""Channels' background work: outbound messages sent, inbound media downloaded, read
receipts sent, and WhatsApp templates synced every hour."""

from __future__ import annotations

from officehub.channels.dispatcher import download_media, send_queued, send_read_receipts
from officehub.channels.template_sync import TEMPLATE_SYNC_JOB
from officehub.kit.scheduled_jobs import DomainJobs

JOBS = DomainJobs(
    periodic=(TEMPLATE_SYNC_JOB,), queue=(send_queued, download_media, send_read_receipts)
)
