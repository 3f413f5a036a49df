"""accounts.is_operator: the platform operator's account (its admins set prices in the portal)

Revision ID: 9a3f5c7e1d24
Revises: 7c1d9e4a2b60
Create Date: 2026-11-23 12:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '9a3f5c7e1d24'
down_revision = '7c1d9e4a2b60'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('accounts') as batch_op:
        batch_op.add_column(sa.Column('is_operator', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade():
    with op.batch_alter_table('accounts') as batch_op:
        batch_op.drop_column('is_operator')
