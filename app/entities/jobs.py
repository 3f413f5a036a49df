"""The entities' heavy work: a large CSV import, run by a heavy worker (app/heavy) as the person who sent it."""
from __future__ import annotations

import json
import uuid as uuid_mod

from app.core.actor import Actor
from app.entities import services
from app.heavy import services as heavy
from app.heavy.models import HeavyJob


@heavy.handler("entity_import", "imports", "Entity import")
def run_entity_import(job: HeavyJob, actor: Actor, progress) -> heavy.Outcome:
    """All rows or none, as in the request: a bad row fails the job with every row's errors (the job's
    `errors`), a repeated reference_number with the 409's message; nothing is created then."""
    params = job.params or {}
    progress(2, "Reading the file.")
    text = heavy.read_input(job).decode("utf-8")
    program_uuid = uuid_mod.UUID(params["program_uuid"])
    entities = services.bulk_import(actor, program_uuid, text, max_rows=int(params.get("max_rows") or 50_000),
                                    progress=progress)
    body = {"program_uuid": str(program_uuid), "created_count": len(entities),
            "entity_uuids": [str(e.uuid) for e in entities]}
    progress(95, f"Imported {len(entities):,} entities.")
    return heavy.Outcome(data=json.dumps(body).encode("utf-8"), filename=f"import-{job.uuid}.json",
                         content_type="application/json",
                         summary={"program_uuid": str(program_uuid), "created_count": len(entities)})
