"""The job status resource of the API (`GET /api/v1/jobs/{uuid}`)."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Any, Literal

from pydantic import Field

from app.core.schemas import ResponseSchema, UtcDateTime


class HeavyJobOut(ResponseSchema):
    """A background job: a large PDF, a bulk import or an export, and where it stands."""
    uuid: uuid_mod.UUID
    kind: Literal["history_pdf", "check_pdf", "entity_import", "events_export"]
    status: Literal["queued", "running", "complete", "failed"]
    progress: int = Field(ge=0, le=100, description="Percent done (100 once complete).")
    message: str | None = Field(None, description="What it is doing, or why it failed.")
    target_uuid: uuid_mod.UUID | None = Field(None, description="The entity, check or program it works on.")
    errors: dict[str, list[str]] | None = Field(
        None, description="A failed import's field errors, keyed `rows.<line>.<field>` (the first 1,000).")
    result: dict[str, Any] | None = Field(None, description="A summary of what it made (an import: counts).")
    result_url: str | None = Field(None, description="Where its file is downloaded, once complete (until "
                                                     "`expires_at`).")
    attempts: int
    created_at: UtcDateTime
    started_at: UtcDateTime | None = None
    finished_at: UtcDateTime | None = None
    expires_at: UtcDateTime | None = Field(None, description="When its file is deleted.")
