"""The official channel's account notices as the API shows them."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp


class AccountNoticeOut(ApiModel):
    """An account notification of the integration, as the platform sent it."""

    id: ServerId
    integration_id: ServerId
    field: str = Field(
        description="The notification's field: phone_number_quality_update, account_update, "
        "account_alerts, business_capability_update, or one not known yet"
    )
    event: str | None = Field(description="The value's `event`, when it has one")
    value: dict[str, Any] = Field(description="The change's value, as the platform sent it")
    received_at: Timestamp
