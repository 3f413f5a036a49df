"""id_checks.recheck_of_id: an ID check run again on the same sealed document data names the one it repeats

Revision ID: c8e1f3a5b720
Revises: b7d2e9f4a611
Create Date: 2026-11-26 15:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'c8e1f3a5b720'
down_revision = 'b7d2e9f4a611'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('id_checks') as batch_op:
        batch_op.add_column(sa.Column('recheck_of_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(op.f('fk_id_checks_recheck_of_id_id_checks'), 'id_checks', ['recheck_of_id'],
                                    ['id'], ondelete='SET NULL')


def downgrade():
    with op.batch_alter_table('id_checks') as batch_op:
        batch_op.drop_constraint(op.f('fk_id_checks_recheck_of_id_id_checks'), type_='foreignkey')
        batch_op.drop_column('recheck_of_id')
