"""events' audit trail: one shape for "who did it" (note_revisions.edited_by_* ids like every other record's),
and the status changes' system notes dropped (the status history holds them; issue 18)

- note_revisions: edited_by_user_id / edited_by_api_key_id (backfilled from edited_by_uuid, which goes);
- event_status_changes.actor_type nullable, as in every actor shape (legacy rows have no actor);
- the immutable "Status changed from X to Y by Z. Request R." notes that status changes wrote until now are
  deleted: each repeats its event_status_changes row (from, to, actor, time, api_reference), which stays.
  Their history rows lose the link (note_id NULL). A reason sent with a status change before this revision was
  written as a separate, ordinary note and stays as it was.

Revision ID: e7a4c2d9b318
Revises: b7d2e9f1a3c5
Create Date: 2026-11-25 21:50:00

"""
from alembic import op
import sqlalchemy as sa

revision = 'e7a4c2d9b318'
down_revision = 'b7d2e9f1a3c5'
branch_labels = None
depends_on = None

SYSTEM_NOTES = ("SELECT note_id FROM event_status_changes WHERE note_id IS NOT NULL")


def upgrade():
    with op.batch_alter_table('note_revisions') as batch_op:
        batch_op.add_column(sa.Column('edited_by_user_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('edited_by_api_key_id', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_note_revisions_edited_by_user_id_users'), 'users',
                                    ['edited_by_user_id'], ['id'], ondelete='SET NULL')
        batch_op.create_foreign_key(batch_op.f('fk_note_revisions_edited_by_api_key_id_api_keys'), 'api_keys',
                                    ['edited_by_api_key_id'], ['id'], ondelete='SET NULL')
    op.execute("UPDATE note_revisions SET edited_by_user_id = (SELECT users.id FROM users "
               "WHERE users.uuid = note_revisions.edited_by_uuid) WHERE edited_by_type = 'user'")
    op.execute("UPDATE note_revisions SET edited_by_api_key_id = (SELECT api_keys.id FROM api_keys "
               "WHERE api_keys.uuid = note_revisions.edited_by_uuid) WHERE edited_by_type = 'api_key'")
    with op.batch_alter_table('note_revisions') as batch_op:
        batch_op.drop_column('edited_by_uuid')

    with op.batch_alter_table('event_status_changes') as batch_op:
        batch_op.alter_column('actor_type', existing_type=sa.String(length=16), nullable=True)

    op.execute(f"CREATE TEMPORARY TABLE system_notes AS SELECT notes.id AS id FROM notes WHERE notes.is_immutable "
               f"AND notes.note_text LIKE 'Status changed from %' AND notes.id IN ({SYSTEM_NOTES})")
    op.execute("UPDATE event_status_changes SET note_id = NULL WHERE note_id IN (SELECT id FROM system_notes)")
    op.execute("DELETE FROM notes WHERE id IN (SELECT id FROM system_notes)")
    op.execute("DROP TABLE system_notes")


def downgrade():
    # The deleted system notes are not written back: the status history keeps what they said.
    with op.batch_alter_table('event_status_changes') as batch_op:
        batch_op.alter_column('actor_type', existing_type=sa.String(length=16), nullable=False)
    with op.batch_alter_table('note_revisions') as batch_op:
        batch_op.add_column(sa.Column('edited_by_uuid', sa.Uuid(), nullable=True))
    op.execute("UPDATE note_revisions SET edited_by_uuid = (SELECT users.uuid FROM users "
               "WHERE users.id = note_revisions.edited_by_user_id) WHERE edited_by_type = 'user'")
    op.execute("UPDATE note_revisions SET edited_by_uuid = (SELECT api_keys.uuid FROM api_keys "
               "WHERE api_keys.id = note_revisions.edited_by_api_key_id) WHERE edited_by_type = 'api_key'")
    with op.batch_alter_table('note_revisions') as batch_op:
        batch_op.drop_constraint('fk_note_revisions_edited_by_api_key_id_api_keys', type_='foreignkey')
        batch_op.drop_constraint('fk_note_revisions_edited_by_user_id_users', type_='foreignkey')
        batch_op.drop_column('edited_by_api_key_id')
        batch_op.drop_column('edited_by_user_id')
