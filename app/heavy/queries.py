"""Reading heavy jobs: only the account's own (any other's is a 404), and their stored results."""
from __future__ import annotations

from sqlalchemy import select

from app.core.actor import Actor
from app.core.errors import Conflict, NotFound
from app.core.storage import BlobNotFound, blob_storage, sealed
from app.extensions import db
from app.heavy.models import COMPLETE, HeavyJob


def get_job(actor: Actor, job_uuid) -> HeavyJob:
    job = db.session.scalar(select(HeavyJob).where(HeavyJob.uuid == job_uuid,
                                                   HeavyJob.account_id == actor.account_id))
    if job is None:
        raise NotFound("Job not found.")
    return job


def result_file(actor: Actor, job_uuid) -> tuple[bytes, str, str]:
    """(data, filename, content type) of a complete job's file; 409 before it is complete or after it was
    deleted (HEAVY_RESULT_TTL_HOURS), 404 for another account's job."""
    job = get_job(actor, job_uuid)
    if job.status != COMPLETE:
        raise Conflict(f"The job is {job.status}: its file exists once it is complete.")
    if not job.has_file:
        raise Conflict("The job's file was deleted after it expired; ask for it again.")
    try:
        data = sealed(blob_storage()).get(job.result_key)
    except BlobNotFound:
        raise Conflict("The job's file was deleted after it expired; ask for it again.") from None
    return data, job.result_filename or "result", job.result_content_type or "application/octet-stream"
