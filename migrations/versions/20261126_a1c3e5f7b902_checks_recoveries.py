"""checks.recoveries: what the recovery sweeper did to a check's run (lost with a worker, with Redis, or with the
process that committed it, and dispatched again), shown on the check page

Revision ID: a1c3e5f7b902
Revises: 4d7e1a9c2b35
Create Date: 2026-11-26 03:40:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'a1c3e5f7b902'
down_revision = '4d7e1a9c2b35'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('checks') as batch_op:
        batch_op.add_column(sa.Column('recoveries', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('checks') as batch_op:
        batch_op.drop_column('recoveries')
