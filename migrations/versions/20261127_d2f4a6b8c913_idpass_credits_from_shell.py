"""idpasses.credits dropped: what an IDPass charged is its shell ID check's credits (IdPass.credits reads it)

Revision ID: d2f4a6b8c913
Revises: c8e1f3a5b720
Create Date: 2026-11-27 09:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'd2f4a6b8c913'
down_revision = 'c8e1f3a5b720'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('idpasses') as batch_op:
        batch_op.drop_column('credits')


def downgrade():
    with op.batch_alter_table('idpasses') as batch_op:
        batch_op.add_column(sa.Column('credits', sa.Integer(), nullable=False, server_default='0'))
    op.execute("UPDATE idpasses SET credits = COALESCE((SELECT id_checks.credits FROM id_checks "
               "WHERE id_checks.id = idpasses.id_check_id), 0)")
    with op.batch_alter_table('idpasses') as batch_op:
        batch_op.alter_column('credits', server_default=None)
