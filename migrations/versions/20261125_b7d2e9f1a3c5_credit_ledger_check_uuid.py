"""credit_ledger.check_uuid: a charge or refund names its check by its public id, so the ledger reads (and
filters by) the check without reaching into the checks domain, which sits above billing

Revision ID: b7d2e9f1a3c5
Revises: 4c8e1a2f7b93
Create Date: 2026-11-25 22:50:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'b7d2e9f1a3c5'
down_revision = '4c8e1a2f7b93'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('credit_ledger') as batch_op:
        batch_op.add_column(sa.Column('check_uuid', sa.Uuid(), nullable=True))
    op.execute("UPDATE credit_ledger SET check_uuid = (SELECT checks.uuid FROM checks "
               "WHERE checks.id = credit_ledger.check_id) WHERE check_id IS NOT NULL")
    with op.batch_alter_table('credit_ledger') as batch_op:
        batch_op.create_index('ix_credit_ledger_account_check_uuid', ['account_id', 'check_uuid'], unique=False)


def downgrade():
    with op.batch_alter_table('credit_ledger') as batch_op:
        batch_op.drop_index('ix_credit_ledger_account_check_uuid')
        batch_op.drop_column('check_uuid')
