"""entity counters in slots: concurrent entity creations in one program no longer wait for each other

The trigger-kept entity_counts and entity_flag_counts (migration 5b8e2d0c7f31) had one row per bucket (program,
type, risk, archived; and flag): the upsert of an entity's INSERT locked that row until its transaction committed,
so an integrator's creations in one program (POST /programs/{uuid}/entities from several connections) queued
behind each other for the rest of each transaction, as notes did before migration 9a4c2e7b1d30. Each bucket is now
split in 16 slots, chosen by the backend (`pg_backend_pid() % 16`), so that transactions on different connections
mostly write different rows; the lists sum a bucket's slots as they summed its rows. See docs/decisions.md,
"Counters in slots".

Revision ID: 7941b65c104e
Revises: 9a4c2e7b1d30
Create Date: 2026-12-02 09:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '7941b65c104e'
down_revision = '9a4c2e7b1d30'
branch_labels = None
depends_on = None

# (table, its bucket's columns)
TABLES = [
    ("entity_counts", ["program_id", "entity_type", "risk_level", "archived"]),
    ("entity_flag_counts", ["program_id", "flag", "entity_type", "risk_level", "archived"]),
]
NEW_ROWS = "SELECT *, 1 AS d FROM new_rows"
OLD_ROWS = "SELECT *, -1 AS d FROM old_rows"


def _sync(slotted: bool) -> str:
    """entity_counts_sync(): the upserts of each statement's net change per bucket (and, slotted, per slot)."""
    columns = ", slot" if slotted else ""
    slot = ", pg_backend_pid() % 16" if slotted else ""

    def upsert(rows: str) -> str:
        groups = "1, 2, 3, 4" + (", 5" if slotted else "")
        flag_groups = "1, 2, 3, 4, 5" + (", 6" if slotted else "")
        return (f"INSERT INTO entity_counts AS c (program_id, entity_type, risk_level, archived{columns}, n) "
                f"SELECT x.program_id, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL{slot}, "
                f"sum(x.d) FROM ({rows}) x WHERE x.deleted_at IS NULL GROUP BY {groups} HAVING sum(x.d) <> 0 "
                f"ORDER BY {groups} ON CONFLICT ON CONSTRAINT pk_entity_counts DO UPDATE SET n = c.n + excluded.n;\n"
                f"        INSERT INTO entity_flag_counts AS c "
                f"(program_id, flag, entity_type, risk_level, archived{columns}, n) "
                f"SELECT x.program_id, f.flag, x.entity_type, coalesce(x.risk_level, ''), "
                f"x.archived_at IS NOT NULL{slot}, sum(x.d) FROM ({rows}) x "
                f"CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.flags) = 'array' "
                f"THEN x.flags ELSE '[]'::jsonb END) AS f(flag) WHERE x.deleted_at IS NULL "
                f"GROUP BY {flag_groups} HAVING sum(x.d) <> 0 ORDER BY {flag_groups} "
                f"ON CONFLICT ON CONSTRAINT pk_entity_flag_counts DO UPDATE SET n = c.n + excluded.n;")
    return f"""CREATE OR REPLACE FUNCTION entity_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {upsert(NEW_ROWS)}
    ELSIF TG_OP = 'DELETE' THEN
        {upsert(OLD_ROWS)}
    ELSIF TG_OP = 'UPDATE' THEN
        {upsert(f"{NEW_ROWS} UNION ALL {OLD_ROWS}")}
    END IF;
    RETURN NULL;
END $$"""


def upgrade():
    for table, bucket in TABLES:
        with op.batch_alter_table(table) as batch:  # batch: SQLite (make run) rebuilds the table
            batch.add_column(sa.Column('slot', sa.SmallInteger(), server_default=sa.text('0'), nullable=False))
            batch.drop_constraint(f'pk_{table}', type_='primary')
            batch.create_primary_key(f'pk_{table}', [*bucket, 'slot'])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_sync(slotted=True))


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_sync(slotted=False))
        for table, bucket in TABLES:  # one row per bucket again: the sum of its slots
            columns = ", ".join(bucket)
            op.execute(f"CREATE TEMPORARY TABLE {table}_folded AS SELECT {columns}, sum(n) AS n FROM {table} "
                       f"GROUP BY {columns}")
            op.execute(f"DELETE FROM {table}")
            op.execute(f"INSERT INTO {table} ({columns}, n) SELECT {columns}, n FROM {table}_folded")
            op.execute(f"DROP TABLE {table}_folded")
    for table, bucket in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(f'pk_{table}', type_='primary')
            batch.create_primary_key(f'pk_{table}', bucket)
            batch.drop_column('slot')
