"""The case.notice.* events: a notice made for a new movement, a notice sent."""

from __future__ import annotations

from officehub.case_notices.schemas import CaseNoticeOut
from officehub.events.catalogue import declare

CREATED = declare("case.notice.created", CaseNoticeOut)
SENT = declare("case.notice.sent", CaseNoticeOut)
