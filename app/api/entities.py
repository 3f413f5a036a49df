from __future__ import annotations

import uuid

from flask import current_app, request

from app.api.base import accepted_job, actor, bp, endpoint, listing, single
from app.core.errors import Invalid, UnsupportedMediaType
from app.core.transactions import commit
from app.entities import queries, services
from app.entities.schemas import EntityBulkOut, EntityDeletedOut, EntityIn, EntityOut, EntityUpdate

TAG = "Entities"
LIST_QUERY = {
    "filter[entity_type]": "individual | business | vessel | property",
    "filter[risk_level]": "low | medium | high | none (no risk assigned)",
    "filter[flags]": "one flag: entities carrying it",
    "filter[reference_number]": "exact match",
    "filter[entity_number]": "the entity's number, in any case, with or without its ENT- prefix",
    "sort": "created_at, entity_name (prefix - for descending; default -created_at)",
    "archived": "true: only archived; false: only not archived; omitted: both",
}
CSV_TYPES = ("text/csv", "application/csv", "text/plain")


@bp.post("/programs/<uuid:program_uuid>/entities")
@endpoint(summary="Create an entity", tag=TAG, body=EntityIn, response=EntityOut, status=201,
          errors=[400, 404, 409, 422],
          description="risk_level defaults to the program's default_risk_level when omitted. reference_number "
                      "taken by another live entity of the program, or an archived program: 409.")
def create_entity(program_uuid: uuid.UUID, body: dict):
    entity = services.create_entity(actor(), program_uuid, body)
    commit()
    return single(EntityOut, entity, 201)


@bp.get("/programs/<uuid:program_uuid>/entities")
@endpoint(summary="List a program's entities", tag=TAG, response=EntityOut, is_list=True, errors=[400, 404],
          query=LIST_QUERY)
def list_entities(program_uuid: uuid.UUID):
    page = queries.list_entities(actor(), program_uuid, queries.list_params(request.args))
    return listing(EntityOut, page)


@bp.post("/programs/<uuid:program_uuid>/entities/bulk")
@endpoint(summary="Import entities from a CSV file", tag=TAG, response=EntityBulkOut, status=201,
          errors=[400, 404, 409, 413, 415, 422, 503], accepted=True,
          content={"multipart/form-data": {"type": "object", "required": ["file"], "properties": {
                       "file": {"type": "string", "contentMediaType": "text/csv",
                                "description": "UTF-8 CSV, header on line 1; at most 50,000 rows and "
                                               "10 MiB by default (CSV_MAX_ROWS, CSV_MAX_BYTES): beyond, 413"}}},
                   "text/csv": {"type": "string", "contentMediaType": "text/csv"}},
          description="Upload the file as multipart/form-data field `file`, or send it as a `text/csv` body. "
                      "Line 1 is the header, naming columns with the entity field names; `flags` separates "
                      "flags with `;`. All rows are created or none: every bad row is reported in `errors` as "
                      "`rows.<line>.<field>`. Rows without risk_level take the program default, or `low`. "
                      "A file of more than HEAVY_IMPORT_SYNC_ROWS rows (200 by default) is imported by a "
                      "background job: 202 with the job (`Location`: its status resource), whose `errors` hold "
                      "the row errors if it fails and whose `result_url` gives this response's `data` once it "
                      "is complete. The header, the row count (413) and the program are checked first either "
                      "way. Too much heavy work waiting or done recently by the account: 429 (Retry-After).")
def bulk_import_entities(program_uuid: uuid.UUID):
    outcome = services.bulk_import_request(actor(), program_uuid, _csv_text(),
                                           max_rows=int(current_app.config["CSV_MAX_ROWS"]),
                                           sync_rows=int(current_app.config["HEAVY_IMPORT_SYNC_ROWS"]))
    commit()
    if not isinstance(outcome, list):
        return accepted_job(outcome)
    return single(EntityBulkOut, {"program_uuid": program_uuid, "created_count": len(outcome),
                                  "entity_uuids": [e.uuid for e in outcome]}, 201)


def _csv_text() -> str:
    upload = request.files.get("file")
    if upload is not None:
        raw = upload.read()
    elif request.mimetype in CSV_TYPES:
        raw = request.get_data()
    elif request.mimetype == "multipart/form-data":
        raise Invalid("Send the CSV file as multipart/form-data field 'file' or as a text/csv body.",
                      errors={"file": ["This field is required."]})
    else:
        raise UnsupportedMediaType("Send the CSV file as multipart/form-data field 'file' or as a text/csv body.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid("The file must be UTF-8 encoded.", errors={"file": ["Must be UTF-8 encoded CSV."]}) from None


@bp.get("/entities/<uuid:entity_uuid>")
@endpoint(summary="Show an entity", tag=TAG, response=EntityOut, errors=[404])
def show_entity(entity_uuid: uuid.UUID):
    return single(EntityOut, queries.get_entity(actor(), entity_uuid))


@bp.patch("/entities/<uuid:entity_uuid>")
@endpoint(summary="Update an entity", tag=TAG, body=EntityUpdate, response=EntityOut, errors=[400, 404, 409],
          description="Only supplied fields change; entity_type cannot change. An archived entity, or an entity "
                      "of an archived program, is read-only (409).")
def update_entity(entity_uuid: uuid.UUID, body: dict):
    entity = services.update_entity(actor(), entity_uuid, body)
    commit()
    return single(EntityOut, entity)


@bp.delete("/entities/<uuid:entity_uuid>")
@endpoint(summary="Delete an entity", tag=TAG, response=EntityDeletedOut, errors=[404, 409],
          description="Soft-deletes the entity and its notes; the response is the last one to show it. "
                      "Restorable in the portal for 30 days.")
def delete_entity(entity_uuid: uuid.UUID):
    entity = services.delete_entity(actor(), entity_uuid)
    commit()
    return single(EntityDeletedOut, entity)


@bp.post("/entities/<uuid:entity_uuid>/archive")
@endpoint(summary="Archive an entity", tag=TAG, response=EntityOut, errors=[404, 409, 422],
          description="Sets archived_at and archives the entity's notes (and later its checks, events and ID "
                      "checks). Archiving an archived entity returns it unchanged.")
def archive_entity(entity_uuid: uuid.UUID):
    entity = services.archive_entity(actor(), entity_uuid)
    commit()
    return single(EntityOut, entity)
