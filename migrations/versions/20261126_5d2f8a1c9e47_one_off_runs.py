"""one-off runs: a monitor run may have no monitor (a one-off screening of a program's entities, launched from the
entities list or POST /programs/{uuid}/runs); runs name their program and who launched a one-off run

Revision ID: 5d2f8a1c9e47
Revises: 71ba716c327d
Create Date: 2026-11-26 08:10:00

"""
from alembic import op
import sqlalchemy as sa


revision = '5d2f8a1c9e47'
down_revision = '71ba716c327d'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('monitor_runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('program_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('requested_by', sa.String(length=255), nullable=True))
    op.execute("UPDATE monitor_runs SET program_id = (SELECT program_id FROM monitors "
               "WHERE monitors.id = monitor_runs.monitor_id)")
    with op.batch_alter_table('monitor_runs', schema=None) as batch_op:
        batch_op.alter_column('program_id', existing_type=sa.Integer(), nullable=False)
        batch_op.alter_column('monitor_id', existing_type=sa.Integer(), nullable=True)
        batch_op.create_foreign_key(batch_op.f('fk_monitor_runs_program_id_programs'), 'programs', ['program_id'],
                                    ['id'], ondelete='CASCADE')
        batch_op.create_index('ix_monitor_runs_program_created', ['program_id', 'created_at', 'id'], unique=False)
    with op.batch_alter_table('monitor_results', schema=None) as batch_op:
        batch_op.alter_column('monitor_id', existing_type=sa.Integer(), nullable=True)


def downgrade():
    op.execute("DELETE FROM monitor_runs WHERE monitor_id IS NULL")
    with op.batch_alter_table('monitor_results', schema=None) as batch_op:
        batch_op.alter_column('monitor_id', existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table('monitor_runs', schema=None) as batch_op:
        batch_op.drop_index('ix_monitor_runs_program_created')
        batch_op.drop_constraint(batch_op.f('fk_monitor_runs_program_id_programs'), type_='foreignkey')
        batch_op.alter_column('monitor_id', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_column('requested_by')
        batch_op.drop_column('program_id')
