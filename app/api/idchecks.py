"""ID checks: documents verified with their issuers, synchronously. Thin: the ID-check service does the work."""
from __future__ import annotations

import uuid

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.idchecks import queries, services
from app.idchecks.schemas import (AdhocIdCheckDeletedOut, AdhocIdCheckOut, IdCheckOut, IdCheckRecheck, IdCheckRun,
                                  IdCheckShowOut)

TAG = "ID checks"
RUN_RULES = ("Synchronous: 200 with the completed check. 400: consent_obtained not true, an unknown id_type, or "
             "the type's data fields (data.<field>: formats per type and state, YYYY-MM months, real dates); an "
             "unknown oac, or none when the account has several. 403: the account is not entitled to the type, or "
             "has no DVS identity (OAC) for a DVS document. 402: credit. 503 (Retry-After): the issuer's service "
             "did not answer; nothing was recorded or charged. Document numbers are never returned: "
             "verification_details and data_summary show them masked.")
LIST_QUERY = {"filter[program_uuid]": "a program's uuid", "filter[entity_uuid]": "an entity's uuid",
              "filter[id_type]": "an ID type", "filter[check_type]": "dvs, nzta_dlv, dia_passport, payroll_super",
              "filter[outcome]": "pass, fail or pending",
              "filter[checked_after]": "inclusive lower bound on checked_at (ISO 8601)",
              "filter[checked_before]": "inclusive upper bound on checked_at (ISO 8601)",
              "sort": "checked_at (default -checked_at), outcome, id_type; prefix - for descending",
              "archived": "true: only archived; false: only not archived; omitted: both"}


@bp.post("/adhoc-id-checks")
@endpoint(summary="Run an adhoc ID check", tag=TAG, body=IdCheckRun, response=AdhocIdCheckOut,
          errors=[400, 402, 403, 422, 503], description=RUN_RULES)
def run_adhoc_id_check(body: dict):
    check = services.run_adhoc_id_check(actor(), body)
    commit()
    return single(AdhocIdCheckOut, check)


@bp.post("/entities/<uuid:entity_uuid>/id-checks")
@endpoint(summary="Run an ID check for an entity", tag=TAG, body=IdCheckRun, response=IdCheckShowOut,
          errors=[400, 402, 403, 404, 409, 422, 503], description=RUN_RULES + " 409: the entity or its program is "
                                                                                "archived.")
def run_entity_id_check(entity_uuid: uuid.UUID, body: dict):
    check = services.run_entity_id_check(actor(), entity_uuid, body)
    commit()
    return single(IdCheckShowOut, check)


RECHECK_RULES = ("Runs the ID check again on the document data it kept (sealed), as a new ID check charged at the "
                 "type's price, naming the original in recheck_of_uuid. consent_obtained must be true again. "
                 "409: an IDPass's ID check, data deleted by the program's retention, or an archived entity.")


@bp.post("/id-checks/<uuid:id_check_uuid>/recheck")
@endpoint(summary="Run an entity's ID check again", tag=TAG, body=IdCheckRecheck, response=IdCheckShowOut,
          errors=[400, 402, 403, 404, 409, 422, 503], description=RECHECK_RULES)
def recheck_id_check(id_check_uuid: uuid.UUID, body: dict):
    check = services.recheck_id_check(actor(), id_check_uuid, body, kind="entity")
    commit()
    return single(IdCheckShowOut, check)


@bp.post("/adhoc-id-checks/<uuid:adhoc_id_check_uuid>/recheck")
@endpoint(summary="Run an adhoc ID check again", tag=TAG, body=IdCheckRecheck, response=AdhocIdCheckOut,
          errors=[400, 402, 403, 404, 409, 422, 503], description=RECHECK_RULES)
def recheck_adhoc_id_check(adhoc_id_check_uuid: uuid.UUID, body: dict):
    check = services.recheck_id_check(actor(), adhoc_id_check_uuid, body, kind="adhoc")
    commit()
    return single(AdhocIdCheckOut, check)


@bp.get("/adhoc-id-checks/<uuid:adhoc_id_check_uuid>")
@endpoint(summary="Show an adhoc ID check", tag=TAG, response=AdhocIdCheckOut, errors=[404])
def show_adhoc_id_check(adhoc_id_check_uuid: uuid.UUID):
    return single(AdhocIdCheckOut, queries.get_id_check(actor(), adhoc_id_check_uuid, kind="adhoc"))


@bp.delete("/adhoc-id-checks/<uuid:adhoc_id_check_uuid>")
@endpoint(summary="Delete an adhoc ID check", tag=TAG, response=AdhocIdCheckDeletedOut, errors=[404],
          description="Soft-deletes: it is no longer listed or shown.")
def delete_adhoc_id_check(adhoc_id_check_uuid: uuid.UUID):
    check = services.delete_adhoc_id_check(actor(), adhoc_id_check_uuid)
    commit()
    return single(AdhocIdCheckDeletedOut, check)


@bp.get("/id-checks/<uuid:id_check_uuid>")
@endpoint(summary="Show an entity's ID check", tag=TAG, response=IdCheckShowOut, errors=[404])
def show_id_check(id_check_uuid: uuid.UUID):
    return single(IdCheckShowOut, queries.get_id_check(actor(), id_check_uuid, kind="entity"))


@bp.get("/id-checks")
@endpoint(summary="List the account's ID checks", tag=TAG, response=IdCheckOut, is_list=True, errors=[400],
          query=LIST_QUERY, description="The entity-bound ID checks (IDPass is not listed here in v1).")
def list_id_checks():
    return listing(IdCheckOut, queries.list_id_checks(actor(), queries.list_params(request.args)))
