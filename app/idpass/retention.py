"""The program's `data_retention_months`, enforced on identity data: an IDPass's images (and its stored certificate,
which may embed them) are deleted once the retention has run from the IDPass's end, and an ID check's sealed
document data (what a re-check needs) once it has run from the check. The records stay: their verdicts, masked
fields, consent, timeline and certificate code are the evidence an auditor asks for. Adhoc IDPasses and ID checks
(no program) keep ADHOC_RETENTION_MONTHS. Why the rest of a program's data is not deleted by this setting:
docs/decisions.md ("Data retention")."""
from __future__ import annotations

from datetime import datetime

from dateutil.relativedelta import relativedelta
from flask import current_app
from sqlalchemy import select, update

from app.core.storage import blob_storage, sealed
from app.core.types import utcnow
from app.extensions import db
from app.idchecks.models import IdCheck
from app.idpass import images
from app.idpass.models import TERMINAL, IdPass
from app.programs.models import Program


def _cutoffs(now: datetime) -> tuple[dict[int, datetime], datetime]:
    """The cutoff per program (months by its setting) and for adhoc records."""
    months = dict(db.session.execute(select(Program.id, Program.data_retention_months)).all())
    adhoc = int(current_app.config.get("ADHOC_RETENTION_MONTHS", 12))
    return {pid: now - relativedelta(months=m) for pid, m in months.items()}, now - relativedelta(months=adhoc)


def enforce(now: datetime | None = None, *, batch: int = 500) -> dict[str, int]:
    now = now or utcnow()
    by_program, adhoc_cutoff = _cutoffs(now)
    purged = 0
    for program_id, cutoff in [*by_program.items(), (None, adhoc_cutoff)]:
        owner = IdPass.program_id == program_id if program_id is not None else IdPass.program_id.is_(None)
        due = db.session.scalars(select(IdPass).where(
            owner, IdPass.status.in_(TERMINAL), IdPass.images_purged_at.is_(None), IdPass.completed_at <= cutoff)
            .order_by(IdPass.completed_at).limit(batch)).all()
        for idpass in due:
            n = images.purge(idpass)
            if idpass.certificate_key:
                sealed(blob_storage()).delete(idpass.certificate_key)
                idpass.certificate_key = None
            idpass.record("retention", f"The data retention ran out: {n} image{'s' * (n != 1)} and the stored "
                                       "certificate file deleted (its verification code still confirms the copies "
                                       "issued).")
            purged += 1
    forgotten = 0
    for program_id, cutoff in [*by_program.items(), (None, adhoc_cutoff)]:
        owner = IdCheck.program_id == program_id if program_id is not None else IdCheck.program_id.is_(None)
        forgotten += db.session.execute(
            update(IdCheck).where(owner, IdCheck.data_sealed.is_not(None), IdCheck.checked_at <= cutoff)
            .values(data_sealed=None).execution_options(synchronize_session=False)).rowcount or 0
    return {"idpasses_purged": purged, "id_checks_forgotten": forgotten}
