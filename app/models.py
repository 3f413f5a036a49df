"""Imports every domain's models so that the metadata (and Alembic) sees all tables."""
from app.accounts.models import (Account, ApiKey, AuditLog, CreditEntry, DvsIdentity,  # noqa: F401
                                 IdempotencyRecord, User)
from app.entities.models import Entity  # noqa: F401
from app.notes.models import Note  # noqa: F401
from app.programs.models import Program  # noqa: F401
from app.screening.models import ScreeningList, ScreeningListVersion, ScreeningRecord  # noqa: F401
from app.billing.models import CheckPrice  # noqa: F401,E402
from app.checks.models import Check  # noqa: F401,E402
from app.events.models import AlertState, Event, EventStatusChange  # noqa: F401,E402
from app.notify.models import ReportEmail  # noqa: F401,E402
from app.monitors.models import Monitor, MonitorChunk, MonitorResult, MonitorRun  # noqa: F401,E402
from app.idchecks.models import IdCheck  # noqa: F401,E402
from app.idpass.models import IdPass, IdPassImage  # noqa: F401,E402
from app.webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint  # noqa: F401,E402
from app.heavy.models import HeavyJob  # noqa: F401,E402
