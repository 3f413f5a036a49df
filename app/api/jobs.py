"""Background jobs of heavy work (large PDFs, bulk imports, exports): their status, and their file once complete.
Only the account's own jobs are seen; another account's job is a 404."""
from __future__ import annotations

import uuid

from flask import Response

from app.api.base import actor, bp, endpoint, job_out, single
from app.heavy import queries
from app.heavy.schemas import HeavyJobOut

TAG = "Jobs"


@bp.get("/jobs/<uuid:job_uuid>")
@endpoint(summary="Show a background job", tag=TAG, response=HeavyJobOut, errors=[404],
          description="The status resource a 202 names in `Location`: `status` queued, running, complete or "
                      "failed, `progress` in percent, a failed job's `message` and `errors`, and once complete "
                      "`result_url` (until `expires_at`: HEAVY_RESULT_TTL_HOURS, 24 by default). Poll it every "
                      "second or two.")
def show_job(job_uuid: uuid.UUID):
    return single(HeavyJobOut, job_out(queries.get_job(actor(), job_uuid)))


@bp.get("/jobs/<uuid:job_uuid>/result")
@endpoint(summary="Download a background job's file", tag=TAG, errors=[404, 409],
          description="The PDF, CSV, or JSON (an import: the `EntityBulkOut` of a synchronous import) a complete "
                      "job made. 409 before it is complete, or after its file expired.",
          produces={"application/pdf": {"type": "string", "format": "binary"},
                    "text/csv": {"type": "string"},
                    "application/json": {"$ref": "#/components/schemas/EntityBulkOut"}})
def job_result(job_uuid: uuid.UUID):
    data, filename, content_type = queries.result_file(actor(), job_uuid)
    return Response(data, mimetype=content_type,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
