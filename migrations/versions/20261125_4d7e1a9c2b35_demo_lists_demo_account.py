"""accounts.is_demo and screening lists of kind 'demo': the demo's invented list is screened for the demo account
only (issue 18)

Revision ID: 4d7e1a9c2b35
Revises: f3b8d1a6c092
Create Date: 2026-11-25 22:00:00

"""
from alembic import op
import sqlalchemy as sa

# revision identifiers, used by Alembic.
revision = '4d7e1a9c2b35'
down_revision = 'f3b8d1a6c092'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('accounts') as batch_op:
        batch_op.add_column(sa.Column('is_demo', sa.Boolean(), nullable=False, server_default=sa.false()))
    # What `flask accounts seed-demo` made before: its list (format 'demo') becomes a demo list, and the account
    # of its default login the demo account.
    op.execute("UPDATE screening_lists SET kind = 'demo' WHERE format = 'demo'")
    op.execute("UPDATE accounts SET is_demo = true WHERE id IN "
               "(SELECT account_id FROM users WHERE email = 'demo@example.com')")


def downgrade():
    op.execute("UPDATE screening_lists SET kind = 'sanction' WHERE format = 'demo'")
    with op.batch_alter_table('accounts') as batch_op:
        batch_op.drop_column('is_demo')
