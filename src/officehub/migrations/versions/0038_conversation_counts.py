"""Issue 45, the conversation list at size: every page counted its whole filtered set
(``count(*)`` beside the page: 27-141 ms at 1,000,000 conversations). ``conversation_counts``
holds how many conversations each (office, inbox, status, assignee, archived) has, kept by
triggers on ``conversations`` in the writing transaction, and the list's total of those
filters is the sum of a few rows (decision "The conversation list's totals kept by the
database"). Created and filled from the table under the triggers' lock, so no write
between the fill and the first counted one is lost.

PostgreSQL: a key's count is split over 8 rows (``shard``: from the conversation id's last
character), and the triggers are deferred to the commit (constraint triggers): a counter
row is locked for the commit alone, not the whole transaction, and only after every
conversation row the transaction changes is already locked (no transaction waits on a
counter while holding a conversation another waits for). SQLite has one writer: shard 0,
triggers run at once.

Revision ID: 0038_conversation_counts
Revises: 0037_unarchived_counts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0038_conversation_counts"
down_revision = "0037_unarchived_counts"
branch_labels = None
depends_on = None

KEY = "office_id, inbox_id, status, assignee_key, is_archived, shard"
SHARDS = 8


def _shard(ident: str) -> str:
    """A conversation's shard: its id's last character (random in the server's ids) in 0-7.
    Plain arithmetic, not a hash function whose values a PostgreSQL upgrade might change:
    a change or a delete must find the shard its conversation was counted in."""
    return f"ascii(right({ident}, 1)) & {SHARDS - 1}"


def _key(row: str, shard: str) -> str:
    return (
        f"{row}.office_id, {row}.inbox_id, {row}.status,"
        f" COALESCE({row}.assigned_user_id, ''), {row}.is_archived, {shard}"
    )


def _add(row: str, shard: str) -> str:
    return f"""
    INSERT INTO conversation_counts ({KEY}, conversations)
    VALUES ({_key(row, shard)}, 1)
    ON CONFLICT ({KEY})
    DO UPDATE SET conversations = conversation_counts.conversations + 1;
"""  # noqa: S608 (the trigger's own names)


def _subtract(row: str, shard: str) -> str:
    # A plain UPDATE: the row was made when the conversation was counted (a cascade from
    # the office's deletion may have taken it already: nothing then to subtract from).
    return f"""
    UPDATE conversation_counts SET conversations = conversations - 1
    WHERE office_id = {row}.office_id AND inbox_id = {row}.inbox_id
      AND status = {row}.status AND assignee_key = COALESCE({row}.assigned_user_id, '')
      AND is_archived = {row}.is_archived AND shard = {shard};
"""  # noqa: S608 (the trigger's own names)


CHANGED = (
    "OLD.office_id IS DISTINCT FROM NEW.office_id OR OLD.inbox_id IS DISTINCT FROM NEW.inbox_id"
    " OR OLD.status IS DISTINCT FROM NEW.status"
    " OR OLD.assigned_user_id IS DISTINCT FROM NEW.assigned_user_id"
    " OR OLD.is_archived IS DISTINCT FROM NEW.is_archived"
)
COLUMNS = "office_id, inbox_id, status, assigned_user_id, is_archived"

_PG_FUNCTION = f"""
CREATE FUNCTION conversations_count() RETURNS trigger AS $$
DECLARE
    s smallint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        s := {_shard("NEW.id")};
        {_add("NEW", "s")}
    ELSIF TG_OP = 'DELETE' THEN
        s := {_shard("OLD.id")};
        {_subtract("OLD", "s")}
    ELSIF (OLD.office_id, OLD.inbox_id, OLD.status, COALESCE(OLD.assigned_user_id, ''),
           OLD.is_archived)
          > (NEW.office_id, NEW.inbox_id, NEW.status, COALESCE(NEW.assigned_user_id, ''),
             NEW.is_archived) THEN
        -- The two rows in key order, so two opposite moves cannot deadlock.
        s := {_shard("NEW.id")};
        {_add("NEW", "s")}
        {_subtract("OLD", "s")}
    ELSE
        s := {_shard("NEW.id")};
        {_subtract("OLD", "s")}
        {_add("NEW", "s")}
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""


def _pg_trigger(name: str, event: str, when: str = "") -> str:
    return (
        f"CREATE CONSTRAINT TRIGGER {name} AFTER {event} ON conversations"
        f" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW {when}"
        " EXECUTE FUNCTION conversations_count()"
    )


_PG_TRIGGERS = (
    _PG_FUNCTION,
    _pg_trigger("conversations_count_insert", "INSERT"),
    _pg_trigger("conversations_count_delete", "DELETE"),
    _pg_trigger("conversations_count_update", f"UPDATE OF {COLUMNS}", f"WHEN ({CHANGED})"),
)
_SQLITE_TRIGGERS = (
    "CREATE TRIGGER conversations_count_insert AFTER INSERT ON conversations"
    f" BEGIN {_add('NEW', '0')} END",
    "CREATE TRIGGER conversations_count_delete AFTER DELETE ON conversations"
    f" BEGIN {_subtract('OLD', '0')} END",
    f"CREATE TRIGGER conversations_count_update AFTER UPDATE OF {COLUMNS} ON conversations"
    f" WHEN {CHANGED.replace('IS DISTINCT FROM', 'IS NOT')}"
    f" BEGIN {_subtract('OLD', '0')} {_add('NEW', '0')} END",
)
_TRIGGER_NAMES = (
    "conversations_count_insert",
    "conversations_count_delete",
    "conversations_count_update",
)


def upgrade() -> None:
    op.create_table(
        "conversation_counts",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("assignee_key", sa.String(length=32), nullable=False),
        sa.Column("is_archived", sa.Boolean(), nullable=False),
        sa.Column("shard", sa.SmallInteger(), nullable=False),
        sa.Column("conversations", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_conversation_counts_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "office_id",
            "inbox_id",
            "status",
            "assignee_key",
            "is_archived",
            "shard",
            name=op.f("pk_conversation_counts"),
        ),
        sqlite_with_rowid=False,
    )
    postgresql = op.get_bind().dialect.name == "postgresql"
    # The triggers first: on PostgreSQL creating them locks out writes to conversations
    # until this transaction ends, so the fill below counts every row there will be.
    for statement in _PG_TRIGGERS if postgresql else _SQLITE_TRIGGERS:
        op.execute(statement)
    shard = _shard("id") if postgresql else "0"
    op.execute(
        f"INSERT INTO conversation_counts ({KEY}, conversations)"  # noqa: S608 (fixed names)
        f" SELECT office_id, inbox_id, status, COALESCE(assigned_user_id, ''), is_archived,"
        f" {shard}, count(*) FROM conversations"
        " GROUP BY office_id, inbox_id, status, COALESCE(assigned_user_id, ''), is_archived"
        + (f", {shard}" if postgresql else "")
    )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name in _TRIGGER_NAMES:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON conversations" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS conversations_count()")
    op.drop_table("conversation_counts")
