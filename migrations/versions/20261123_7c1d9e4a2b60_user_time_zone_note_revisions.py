"""users.time_zone (portal profile setting) and note_revisions (edit history of notes)

Revision ID: 7c1d9e4a2b60
Revises: 6ed6625b6a81
Create Date: 2026-11-23 09:00:00

"""
from alembic import op
import sqlalchemy as sa

import app.core.types

# revision identifiers, used by Alembic.
revision = '7c1d9e4a2b60'
down_revision = '6ed6625b6a81'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users') as batch_op:
        batch_op.add_column(sa.Column('time_zone', sa.String(length=64), nullable=True))
    op.create_table(
        'note_revisions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('note_id', sa.Integer(), nullable=False),
        sa.Column('previous_text', sa.Text(), nullable=False),
        sa.Column('edited_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
        sa.Column('edited_by_type', sa.String(length=16), nullable=True),
        sa.Column('edited_by_uuid', sa.Uuid(), nullable=True),
        sa.Column('edited_by_name', sa.String(length=320), nullable=True),
        sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_note_revisions_note_id_notes'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_note_revisions')),
    )
    op.create_index('ix_note_revisions_note', 'note_revisions', ['note_id', 'id'])


def downgrade():
    op.drop_index('ix_note_revisions_note', table_name='note_revisions')
    op.drop_table('note_revisions')
    with op.batch_alter_table('users') as batch_op:
        batch_op.drop_column('time_zone')
