"""Issue 39: the secrets of stored documents sealed at rest (``officehub.kit.encryption``,
``SealedDocument``): a FIRE_WEBHOOK action's secret, header values and URL in
``automation_rules.actions``/``else_actions``, a flow step's webhook URL and header values in
``flows.content``, the header values of ``webhooks.headers`` and ``action_deliveries.headers``,
and the URLs of ``webhooks`` and ``action_deliveries`` that may carry a credential.
Rows stored before are sealed here (downgrade opens them again).

Revision ID: 0027_sealed_secrets
Revises: 0026_whatsapp_identity
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0027_sealed_secrets"
down_revision = "0026_whatsapp_identity"
branch_labels = None
depends_on = None

_DOCUMENTS = (
    ("automation_rules", "actions", False),
    ("automation_rules", "else_actions", False),
    ("flows", "content", False),
    ("webhooks", "headers", True),
    ("action_deliveries", "headers", True),
)


def _rewrite(change: Callable[[str, str], str]) -> None:
    """Every document's secrets passed through ``change(value, purpose)``, row by row."""
    from officehub.kit.encryption import map_header_values, map_secrets

    bind = op.get_bind()
    for table_name, column, headers in _DOCUMENTS:
        purpose = f"{table_name}.{column}"
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, JSON))

        def one(value: str, purpose: str = purpose) -> str:
            return change(value, purpose)

        for row in bind.execute(sa.select(table.c.id, table.c[column])).all():
            value: Any = row[1]
            if value is None:
                continue
            changed = map_header_values(value, one) if headers else map_secrets(value, one)
            if changed != value:
                bind.execute(table.update().where(table.c.id == row[0]).values({column: changed}))


_URLS = (("webhooks", "url"), ("action_deliveries", "url"))


def _rewrite_urls(change: Callable[[str, str], str]) -> None:
    """The URLs that may carry a credential (``carries_credentials``) through ``change``."""
    from officehub.kit.encryption import carries_credentials, is_sealed

    bind = op.get_bind()
    for table_name, column in _URLS:
        purpose = f"{table_name}.{column}"
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, sa.Text()))
        for row in bind.execute(sa.select(table.c.id, table.c[column])).all():
            value = row[1]
            if value is None or not (is_sealed(value) or carries_credentials(value)):
                continue
            changed = change(value, purpose)
            if changed != value:
                bind.execute(table.update().where(table.c.id == row[0]).values({column: changed}))


def _sealing() -> Callable[[str, str], str]:
    from officehub.kit.config import get_settings
    from officehub.kit.encryption import is_sealed, keyring, load_secrets_keys

    def seal(value: str, purpose: str) -> str:
        if is_sealed(value):
            return value
        key = keyring.current or load_secrets_keys(get_settings())
        return key.seal(value, purpose=purpose)

    return seal


def upgrade() -> None:
    _rewrite(_sealing())
    _rewrite_urls(_sealing())


def downgrade() -> None:
    from officehub.kit.encryption import open_text

    _rewrite(lambda value, purpose: open_text(value, purpose))
    _rewrite_urls(lambda value, purpose: open_text(value, purpose))
