"""checks.near_misses: the best screening results below the threshold, kept with the check (issue 23)

Revision ID: a7d3e9c4b618
Revises: 48cc4d37b29d
Create Date: 2026-12-01 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'a7d3e9c4b618'
down_revision = '48cc4d37b29d'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('checks', schema=None) as batch_op:
        batch_op.add_column(sa.Column('near_misses', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('checks', schema=None) as batch_op:
        batch_op.drop_column('near_misses')
