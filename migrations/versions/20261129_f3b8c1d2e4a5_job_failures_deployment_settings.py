"""job failures; deployment settings (the public numbers' key, and the last ids numbered the old way); invitations

Revision ID: f3b8c1d2e4a5
Revises: e5a7c9d1f246
Create Date: 2026-11-26 19:40:00

"""
import json
import secrets
from datetime import datetime, timezone

from alembic import op
import sqlalchemy as sa

import app.core.types


# revision identifiers, used by Alembic.
revision = 'f3b8c1d2e4a5'
down_revision = 'e5a7c9d1f246'
branch_labels = None
depends_on = None

# The tables of the records that have public numbers (app/core/numbers.py KINDS).
NUMBERED = {"program": "programs", "entity": "entities", "note": "notes", "check": "checks", "event": "events",
            "monitor": "monitors", "id_check": "id_checks", "idpass": "idpasses"}


def upgrade():
    op.create_table('job_failures',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_name', sa.String(length=100), nullable=False),
    sa.Column('work_key', sa.String(length=500), nullable=False),
    sa.Column('args', sa.JSON(), nullable=True),
    sa.Column('account_id', sa.Integer(), nullable=True),
    sa.Column('rq_job_id', sa.String(length=200), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.Column('first_failed_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_failed_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_job_failures_account_id_accounts'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_failures')),
    sa.UniqueConstraint('job_name', 'work_key', name='uq_job_failures_work')
    )
    with op.batch_alter_table('job_failures', schema=None) as batch_op:
        batch_op.create_index('ix_job_failures_account_last', ['account_id', 'last_failed_at'], unique=False)
        batch_op.create_index('ix_job_failures_last', ['last_failed_at'], unique=False)

    settings = op.create_table('deployment_settings',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.Column('created_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_deployment_settings'))
    )
    # An existing deployment keeps the numbers it has given (printed on reports, quoted in e-mails and tickets):
    # the records up to today's last id of each kind keep their Sqids numbers; later ones get keyed numbers.
    conn = op.get_bind()
    legacy = {kind: conn.execute(sa.text(f"SELECT max(id) FROM {table}")).scalar() or 0
              for kind, table in NUMBERED.items()}
    now = datetime.now(timezone.utc)
    op.bulk_insert(settings, [
        {"name": "numbers_legacy_max_ids", "value": json.dumps(legacy), "created_at": now},
        # The deployment's own key of its public numbers, made here once: every web host and worker reads it.
        {"name": "numbers_key", "value": secrets.token_hex(32), "created_at": now}])


    op.create_table('invitations',
    sa.Column('account_id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('invited_by_user_id', sa.Integer(), nullable=True),
    sa.Column('created_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('expires_at', app.core.types.UTCDateTime(timezone=True), nullable=False),
    sa.Column('accepted_at', app.core.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.Uuid(), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['accounts.id'], name=op.f('fk_invitations_account_id_accounts'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['invited_by_user_id'], ['users.id'], name=op.f('fk_invitations_invited_by_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_invitations')),
    sa.UniqueConstraint('account_id', 'email', name='uq_invitations_account_email'),
    sa.UniqueConstraint('token_hash', name=op.f('uq_invitations_token_hash')),
    sa.UniqueConstraint('uuid', name=op.f('uq_invitations_uuid'))
    )
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_invitations_account_id'), ['account_id'], unique=False)


def downgrade():
    with op.batch_alter_table('invitations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_invitations_account_id'))
    op.drop_table('invitations')
    op.drop_table('deployment_settings')
    with op.batch_alter_table('job_failures', schema=None) as batch_op:
        batch_op.drop_index('ix_job_failures_last')
        batch_op.drop_index('ix_job_failures_account_last')
    op.drop_table('job_failures')
