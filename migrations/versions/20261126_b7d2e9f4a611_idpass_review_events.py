"""events: an event may come from an IDPass under review (its ID check, `id_check_id`) instead of a screening
check; exactly one of `check_id` and `id_check_id` is set

Revision ID: b7d2e9f4a611
Revises: 45df1bd585cb
Create Date: 2026-11-26 14:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = 'b7d2e9f4a611'
down_revision = '45df1bd585cb'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('events') as batch_op:
        batch_op.add_column(sa.Column('id_check_id', sa.Integer(), nullable=True))
        batch_op.alter_column('check_id', existing_type=sa.Integer(), nullable=True)
        batch_op.create_foreign_key('fk_events_id_check_id_id_checks', 'id_checks', ['id_check_id'], ['id'],
                                    ondelete='CASCADE')
        batch_op.create_check_constraint(op.f('ck_events_one_source'), '(check_id IS NULL) <> (id_check_id IS NULL)')
    op.create_index('ix_events_id_check', 'events', ['id_check_id'], unique=False,
                    postgresql_where=sa.text('id_check_id IS NOT NULL'))


def downgrade():
    op.execute('DELETE FROM events WHERE check_id IS NULL')
    op.drop_index('ix_events_id_check', table_name='events', postgresql_where=sa.text('id_check_id IS NOT NULL'))
    with op.batch_alter_table('events') as batch_op:
        batch_op.drop_constraint(op.f('ck_events_one_source'), type_='check')
        batch_op.drop_constraint('fk_events_id_check_id_id_checks', type_='foreignkey')
        batch_op.alter_column('check_id', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column('id_check_id')
