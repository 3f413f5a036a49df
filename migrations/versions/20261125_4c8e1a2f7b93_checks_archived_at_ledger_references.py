"""checks.archived_at: an entity's checks (and so their reports) are archived with it (spec, Entity archive);
credit_ledger.reference_type / reference_id dropped (never written: check_id says which check a row is for)

Revision ID: 4c8e1a2f7b93
Revises: 9a3f5c7e1d24
Create Date: 2026-11-25 22:00:00

"""
from alembic import op
import sqlalchemy as sa

import app.core.types

# revision identifiers, used by Alembic.
revision = '4c8e1a2f7b93'
down_revision = '9a3f5c7e1d24'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('checks') as batch_op:
        batch_op.add_column(sa.Column('archived_at', app.core.types.UTCDateTime(timezone=True), nullable=True))
    # Checks of entities archived before this revision go with their entity (the spec's cascade).
    op.execute("UPDATE checks SET archived_at = (SELECT entities.archived_at FROM entities "
               "WHERE entities.id = checks.entity_id) "
               "WHERE entity_id IN (SELECT id FROM entities WHERE archived_at IS NOT NULL)")
    with op.batch_alter_table('credit_ledger') as batch_op:
        batch_op.drop_column('reference_type')
        batch_op.drop_column('reference_id')


def downgrade():
    with op.batch_alter_table('credit_ledger') as batch_op:
        batch_op.add_column(sa.Column('reference_type', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('reference_id', sa.Integer(), nullable=True))
    with op.batch_alter_table('checks') as batch_op:
        batch_op.drop_column('archived_at')
