"""Heavy jobs in the portal: a large PDF, import or export is a job page whose progress polls every second (htmx),
with the file to download once complete. Only the account's own jobs are shown (404 for any other)."""
from __future__ import annotations

import uuid

from flask import Response, redirect, url_for
from flask_login import login_required

from app.heavy import queries
from app.heavy import services as heavy
from app.portal import bp
from app.portal.base import portal_actor, render


def job_redirect(job):
    """Where a request that became a job sends the browser: its page (303, so a reload does not ask again)."""
    return redirect(url_for("portal.jobs_show", job_uuid=job.uuid), code=303)


@bp.get("/jobs/<uuid:job_uuid>")
@login_required
def jobs_show(job_uuid: uuid.UUID):
    job = queries.get_job(portal_actor(), job_uuid)
    return render("jobs/show.html", "jobs/_status.html", job=job, label=heavy.label_of(job.kind))


@bp.get("/jobs/<uuid:job_uuid>/download")
@login_required
def jobs_download(job_uuid: uuid.UUID):
    data, filename, content_type = queries.result_file(portal_actor(), job_uuid)
    return Response(data, mimetype=content_type, headers={"Content-Disposition": f'attachment; filename="{filename}"'})
