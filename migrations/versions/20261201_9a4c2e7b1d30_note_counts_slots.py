"""note_counts in slots: concurrent notes by one author in one program no longer wait for each other

The trigger-kept note_counts (migration 5b8e2d0c7f31) had one row per bucket (account, program, author, archived):
the upsert of a note's INSERT locked that row until its transaction committed, so two reviews by the same author
(every integrator request signs with the same API key) queued behind each other for the rest of the first one's
transaction (the status change, the audit rows, the webhook outbox, the commit): INSERT INTO notes averaged
18.8 ms under the load test against 0.7 ms alone. Each bucket is now split in 16 slots, chosen by the backend
(`pg_backend_pid() % 16`), so that transactions on different connections mostly write different rows; the lists
sum a bucket's slots as they summed its rows. See docs/decisions.md, "Counters in slots".

Revision ID: 9a4c2e7b1d30
Revises: a7d3e9c4b618
Create Date: 2026-12-01 09:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '9a4c2e7b1d30'
down_revision = 'a7d3e9c4b618'
branch_labels = None
depends_on = None

BUCKET = "account_id, program_id, created_by_type, created_by_id, archived"


def _sync(slotted: bool) -> str:
    """note_counts_sync(): the upsert of each statement's net change per bucket (and, slotted, per slot)."""
    columns = BUCKET + (", slot" if slotted else "")
    slot = ", pg_backend_pid() % 16" if slotted else ""
    groups = "1, 2, 3, 4, 5" + (", 6" if slotted else "")

    def upsert(rows: str) -> str:
        return (f"INSERT INTO note_counts AS c ({columns}, n) SELECT x.account_id, x.program_id, "
                f"coalesce(x.created_by_type, ''), coalesce(x.created_by_user_id, x.created_by_api_key_id, 0), "
                f"x.archived_at IS NOT NULL{slot}, sum(x.d) FROM ({rows}) x  WHERE x.deleted_at IS NULL "
                f"GROUP BY {groups} HAVING sum(x.d) <> 0 ORDER BY {groups} "
                f"ON CONFLICT ON CONSTRAINT pk_note_counts DO UPDATE SET n = c.n + excluded.n;")
    return f"""CREATE OR REPLACE FUNCTION note_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {upsert("SELECT *, 1 AS d FROM new_rows")}
    ELSIF TG_OP = 'DELETE' THEN
        {upsert("SELECT *, -1 AS d FROM old_rows")}
    ELSIF TG_OP = 'UPDATE' THEN
        {upsert("SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows")}
    END IF;
    RETURN NULL;
END $$"""


def upgrade():
    with op.batch_alter_table('note_counts') as batch:  # batch: SQLite (make run) rebuilds the table
        batch.add_column(sa.Column('slot', sa.SmallInteger(), server_default=sa.text('0'), nullable=False))
        batch.drop_constraint('pk_note_counts', type_='primary')
        batch.create_primary_key('pk_note_counts',
                                 ['account_id', 'program_id', 'created_by_type', 'created_by_id', 'archived', 'slot'])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_sync(slotted=True))


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_sync(slotted=False))
        # one row per bucket again: the sum of its slots
        op.execute(f"CREATE TEMPORARY TABLE note_counts_folded AS SELECT {BUCKET}, sum(n) AS n FROM note_counts "
                   f"GROUP BY {BUCKET}")
        op.execute("DELETE FROM note_counts")
        op.execute(f"INSERT INTO note_counts ({BUCKET}, n) SELECT {BUCKET}, n FROM note_counts_folded")
        op.execute("DROP TABLE note_counts_folded")
    with op.batch_alter_table('note_counts') as batch:
        batch.drop_constraint('pk_note_counts', type_='primary')
        batch.create_primary_key('pk_note_counts',
                                 ['account_id', 'program_id', 'created_by_type', 'created_by_id', 'archived'])
        batch.drop_column('slot')
