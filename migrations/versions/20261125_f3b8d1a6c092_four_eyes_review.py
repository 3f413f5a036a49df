"""four-eyes review of closings (issue 18 §5): programs.review_policy and strong_hit_score, event_approvals,
event_status_changes.approval_id

Revision ID: f3b8d1a6c092
Revises: e7a4c2d9b318
Create Date: 2026-11-25 22:10:00

"""
from alembic import op
import sqlalchemy as sa

import app.core.types

revision = 'f3b8d1a6c092'
down_revision = 'e7a4c2d9b318'
branch_labels = None
depends_on = None


def _actor(prefix: str) -> list:
    return [sa.Column(f'{prefix}_type', sa.String(length=16), nullable=True),
            sa.Column(f'{prefix}_user_id', sa.Integer(), nullable=True),
            sa.Column(f'{prefix}_api_key_id', sa.Integer(), nullable=True),
            sa.Column(f'{prefix}_name', sa.String(length=320), nullable=True),
            sa.ForeignKeyConstraint([f'{prefix}_user_id'], ['users.id'],
                                    name=op.f(f'fk_event_approvals_{prefix}_user_id_users'), ondelete='SET NULL'),
            sa.ForeignKeyConstraint([f'{prefix}_api_key_id'], ['api_keys.id'],
                                    name=op.f(f'fk_event_approvals_{prefix}_api_key_id_api_keys'), ondelete='SET NULL')]


def upgrade():
    with op.batch_alter_table('programs') as batch_op:
        batch_op.add_column(sa.Column('review_policy', sa.String(length=24), nullable=False, server_default='single'))
        batch_op.add_column(sa.Column('strong_hit_score', sa.Float(), nullable=False, server_default='0.9'))
    op.create_table(
        'event_approvals',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('event_id', sa.Integer(), nullable=False),
        sa.Column('requested_status', sa.String(length=24), nullable=False),
        sa.Column('requested_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('request_note_id', sa.Integer(), nullable=True),
        sa.Column('request_reference', sa.String(length=36), nullable=True),
        sa.Column('decision', sa.String(length=16), nullable=True),
        sa.Column('decided_at', app.core.types.UTCDateTime(timezone=True), nullable=True),
        sa.Column('decision_note_id', sa.Integer(), nullable=True),
        sa.Column('decision_reference', sa.String(length=36), nullable=True),
        *_actor('requested_by'), *_actor('decided_by'),
        sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_event_approvals_event_id_events'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['request_note_id'], ['notes.id'],
                                name=op.f('fk_event_approvals_request_note_id_notes'), ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['decision_note_id'], ['notes.id'],
                                name=op.f('fk_event_approvals_decision_note_id_notes'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_event_approvals')),
    )
    op.create_index('ix_event_approvals_event_id', 'event_approvals', ['event_id'])
    op.create_index('uq_event_approvals_pending', 'event_approvals', ['event_id'], unique=True,
                    postgresql_where=sa.text('decision IS NULL'), sqlite_where=sa.text('decision IS NULL'))
    with op.batch_alter_table('event_status_changes') as batch_op:
        batch_op.add_column(sa.Column('approval_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_event_status_changes_approval_id_event_approvals'),
                                    'event_approvals', ['approval_id'], ['id'], ondelete='SET NULL')


def downgrade():
    with op.batch_alter_table('event_status_changes') as batch_op:
        batch_op.drop_constraint('fk_event_status_changes_approval_id_event_approvals', type_='foreignkey')
        batch_op.drop_column('approval_id')
    op.drop_index('uq_event_approvals_pending', table_name='event_approvals')
    op.drop_index('ix_event_approvals_event_id', table_name='event_approvals')
    op.drop_table('event_approvals')
    with op.batch_alter_table('programs') as batch_op:
        batch_op.drop_column('strong_hit_score')
        batch_op.drop_column('review_policy')
