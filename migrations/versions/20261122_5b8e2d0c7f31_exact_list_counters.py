"""exact list counters (entity_counts, entity_flag_counts, note_counts) and index-only list indexes

Lists answer an exact `total` without counting rows: PostgreSQL statement-level triggers keep the number of live
rows per bucket; the list indexes carry what the API filters on, so a page's ids come from an index-only scan.
See docs/performance.md, "API latency". SQLite keeps count(*) (no triggers there).

Revision ID: 5b8e2d0c7f31
Revises: 4cca6f2f4614
Create Date: 2026-11-22 06:05:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '5b8e2d0c7f31'
down_revision = '4cca6f2f4614'
branch_labels = None
depends_on = None

LIVE = sa.text("deleted_at IS NULL")
# (table, index, key columns, INCLUDE columns now, key columns before)
INDEXES = [
    ("entities", "ix_entities_program_created", ["program_id", "created_at", "id"], ["archived_at", "flags"],
     ["program_id", "created_at", "id"]),
    ("entities", "ix_entities_program_type_created", ["program_id", "entity_type", "created_at", "id"],
     ["archived_at"], ["program_id", "entity_type", "created_at", "id"]),
    ("entities", "ix_entities_program_risk_created", ["program_id", "risk_level", "created_at", "id"],
     ["archived_at"], ["program_id", "risk_level", "created_at", "id"]),
    ("entities", "ix_entities_program_name", ["program_id", "entity_name", "id"],
     ["entity_type", "risk_level", "archived_at", "flags"], ["program_id", "entity_name", "id"]),
    ("notes", "ix_notes_entity_created", ["entity_id", "created_at", "id"], [], ["entity_id", "created_at"]),
    ("notes", "ix_notes_account_created", ["account_id", "created_at", "id"], ["archived_at"],
     ["account_id", "created_at"]),
    ("notes", "ix_notes_account_updated", ["account_id", "updated_at", "id"], ["archived_at"],
     ["account_id", "updated_at"]),
]

# Functions, triggers and the backfill (PostgreSQL only), one statement each.
POSTGRESQL = [
    """CREATE OR REPLACE FUNCTION entity_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO entity_counts AS c (program_id, entity_type, risk_level, archived, n) SELECT x.program_id, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4 ON CONFLICT ON CONSTRAINT pk_entity_counts DO UPDATE SET n = c.n + excluded.n;
        INSERT INTO entity_flag_counts AS c (program_id, flag, entity_type, risk_level, archived, n) SELECT x.program_id, f.flag, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows) x CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.flags) = 'array' THEN x.flags ELSE '[]'::jsonb END) AS f(flag) WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_entity_flag_counts DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO entity_counts AS c (program_id, entity_type, risk_level, archived, n) SELECT x.program_id, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, -1 AS d FROM old_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4 ON CONFLICT ON CONSTRAINT pk_entity_counts DO UPDATE SET n = c.n + excluded.n;
        INSERT INTO entity_flag_counts AS c (program_id, flag, entity_type, risk_level, archived, n) SELECT x.program_id, f.flag, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, -1 AS d FROM old_rows) x CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.flags) = 'array' THEN x.flags ELSE '[]'::jsonb END) AS f(flag) WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_entity_flag_counts DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO entity_counts AS c (program_id, entity_type, risk_level, archived, n) SELECT x.program_id, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4 ON CONFLICT ON CONSTRAINT pk_entity_counts DO UPDATE SET n = c.n + excluded.n;
        INSERT INTO entity_flag_counts AS c (program_id, flag, entity_type, risk_level, archived, n) SELECT x.program_id, f.flag, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows) x CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.flags) = 'array' THEN x.flags ELSE '[]'::jsonb END) AS f(flag) WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_entity_flag_counts DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END $$""",
    """CREATE OR REPLACE FUNCTION entity_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_counts;
    DELETE FROM entity_flag_counts;
    RETURN NULL;
END $$""",
    'CREATE TRIGGER entity_counts_ins AFTER INSERT ON entities REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_sync()',
    'CREATE TRIGGER entity_counts_upd AFTER UPDATE ON entities REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_sync()',
    'CREATE TRIGGER entity_counts_del AFTER DELETE ON entities REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_sync()',
    'CREATE TRIGGER entity_counts_trunc AFTER TRUNCATE ON entities FOR EACH STATEMENT EXECUTE FUNCTION entity_counts_truncate()',
    """CREATE OR REPLACE FUNCTION note_counts_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO note_counts AS c (account_id, program_id, created_by_type, created_by_id, archived, n) SELECT x.account_id, x.program_id, coalesce(x.created_by_type, ''), coalesce(x.created_by_user_id, x.created_by_api_key_id, 0), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_note_counts DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO note_counts AS c (account_id, program_id, created_by_type, created_by_id, archived, n) SELECT x.account_id, x.program_id, coalesce(x.created_by_type, ''), coalesce(x.created_by_user_id, x.created_by_api_key_id, 0), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, -1 AS d FROM old_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_note_counts DO UPDATE SET n = c.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO note_counts AS c (account_id, program_id, created_by_type, created_by_id, archived, n) SELECT x.account_id, x.program_id, coalesce(x.created_by_type, ''), coalesce(x.created_by_user_id, x.created_by_api_key_id, 0), x.archived_at IS NOT NULL, sum(x.d) FROM (SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows) x  WHERE x.deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT ON CONSTRAINT pk_note_counts DO UPDATE SET n = c.n + excluded.n;
    END IF;
    RETURN NULL;
END $$""",
    """CREATE OR REPLACE FUNCTION note_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM note_counts;
    RETURN NULL;
END $$""",
    'CREATE TRIGGER note_counts_ins AFTER INSERT ON notes REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION note_counts_sync()',
    'CREATE TRIGGER note_counts_upd AFTER UPDATE ON notes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION note_counts_sync()',
    'CREATE TRIGGER note_counts_del AFTER DELETE ON notes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION note_counts_sync()',
    'CREATE TRIGGER note_counts_trunc AFTER TRUNCATE ON notes FOR EACH STATEMENT EXECUTE FUNCTION note_counts_truncate()',
    """INSERT INTO entity_counts (program_id, entity_type, risk_level, archived, n)
SELECT program_id, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
FROM entities WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4""",
    """INSERT INTO entity_flag_counts (program_id, flag, entity_type, risk_level, archived, n)
SELECT program_id, f.flag, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
FROM entities CROSS JOIN LATERAL jsonb_array_elements_text(flags) AS f(flag)
WHERE deleted_at IS NULL AND jsonb_typeof(flags) = 'array' GROUP BY 1, 2, 3, 4, 5""",
    """INSERT INTO note_counts (account_id, program_id, created_by_type, created_by_id, archived, n)
SELECT account_id, program_id, coalesce(created_by_type, ''), coalesce(created_by_user_id, created_by_api_key_id, 0),
       archived_at IS NOT NULL, count(*)
FROM notes WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5""",
]
DROP_POSTGRESQL = [
    *(f"DROP TRIGGER IF EXISTS {p}_{op_} ON {t}" for t, p in (("entities", "entity_counts"), ("notes", "note_counts"))
      for op_ in ("ins", "upd", "del", "trunc")),
    "DROP FUNCTION IF EXISTS entity_counts_sync()", "DROP FUNCTION IF EXISTS entity_counts_truncate()",
    "DROP FUNCTION IF EXISTS note_counts_sync()", "DROP FUNCTION IF EXISTS note_counts_truncate()",
]


def upgrade():
    op.create_table('entity_counts',
    sa.Column('program_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('entity_type', sa.String(length=16), nullable=False),
    sa.Column('risk_level', sa.String(length=8), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('program_id', 'entity_type', 'risk_level', 'archived', name=op.f('pk_entity_counts'))
    )
    op.create_table('entity_flag_counts',
    sa.Column('program_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('flag', sa.String(length=32), nullable=False),
    sa.Column('entity_type', sa.String(length=16), nullable=False),
    sa.Column('risk_level', sa.String(length=8), nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('program_id', 'flag', 'entity_type', 'risk_level', 'archived',
                            name=op.f('pk_entity_flag_counts'))
    )
    op.create_table('note_counts',
    sa.Column('account_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('program_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('created_by_type', sa.String(length=16), nullable=False),
    sa.Column('created_by_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('archived', sa.Boolean(), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('account_id', 'program_id', 'created_by_type', 'created_by_id', 'archived',
                            name=op.f('pk_note_counts'))
    )
    for table, name, columns, include, _before in INDEXES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(name, postgresql_where=LIVE)
            batch_op.create_index(name, columns, unique=False, postgresql_where=LIVE, postgresql_include=include)
    if op.get_bind().dialect.name == "postgresql":
        for statement in POSTGRESQL:
            op.execute(statement)


def downgrade():
    if op.get_bind().dialect.name == "postgresql":
        for statement in DROP_POSTGRESQL:
            op.execute(statement)
    for table, name, _columns, _include, before in reversed(INDEXES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(name, postgresql_where=LIVE)
            batch_op.create_index(name, before, unique=False, postgresql_where=LIVE)
    op.drop_table('note_counts')
    op.drop_table('entity_flag_counts')
    op.drop_table('entity_counts')
