"""report_emails: the dispatch columns of durable background work (job_id, enqueued_at, started_at, recoveries),
so that the recovery sweeper finds a send lost with a worker or with Redis, or a job that crashed, and marks the
e-mail failed after its last try instead of leaving it pending for good

Revision ID: c4e6a8b0d213
Revises: a1c3e5f7b902
Create Date: 2026-11-26 04:30:00

"""
from alembic import op
import sqlalchemy as sa
import app.core.types

# revision identifiers, used by Alembic.
revision = 'c4e6a8b0d213'
down_revision = 'a1c3e5f7b902'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('report_emails') as batch_op:
        batch_op.add_column(sa.Column('job_id', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('enqueued_at', app.core.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('started_at', app.core.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('recoveries', sa.JSON(), nullable=True))
    op.create_index('ix_report_emails_pending', 'report_emails', ['status', 'created_at'], unique=False,
                    postgresql_where=sa.text("status = 'pending'"))


def downgrade():
    op.drop_index('ix_report_emails_pending', table_name='report_emails')
    with op.batch_alter_table('report_emails') as batch_op:
        batch_op.drop_column('recoveries')
        batch_op.drop_column('started_at')
        batch_op.drop_column('enqueued_at')
        batch_op.drop_column('job_id')
