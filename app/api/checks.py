"""Checks: launches on entities and adhoc subjects, reads. Thin: the checks service does the work."""
from __future__ import annotations

import uuid

from flask import g, request

from app import reports
from app.api.base import accepted_job, actor, bp, endpoint, listing, single
from app.checks import queries, services
from app.checks.models import Check
from app.checks.schemas import (AdhocCheckLaunch, AdhocCheckOut, AdhocCheckShowOut, CheckOut, CheckShowOut,
                                EntityCheckLaunch, LaunchChildOut, LaunchOut)
from app.core.pdf import attachment
from app.core.transactions import commit
from app.screening.engine import NEAR_MISS_COUNT, NEAR_MISS_MIN, NEAR_MISS_NAME_WINDOW, NEAR_MISS_WINDOW

TAG = "Checks"
LIST_QUERY = {"filter[status]": "pending, processing, complete, failed",
              "filter[check_type]": "an operation, or group",
              "filter[outcome]": "pass or warning",
              "filter[created_at_from]": "inclusive lower bound (ISO 8601 date-time)",
              "filter[created_at_to]": "inclusive upper bound (ISO 8601 date-time)",
              "sort": "created_at or -created_at (default)",
              "archived": "true: only archived; false: only not archived; omitted: both (an entity's checks are "
                          "archived with it)"}
SHOW_QUERY = {"near_misses": (
    "true: add `near_misses`, the best results that scored below the threshold: a name at most "
    f"{NEAR_MISS_NAME_WINDOW:.2f} below it and a score (after the date of birth, country and gender) at most "
    f"{NEAR_MISS_WINDOW:.2f} below it, never below {NEAR_MISS_MIN:.2f} (0.70 and 0.55 at the default 80); at most "
    f"{NEAR_MISS_COUNT}, best first, in the shape of `details.results`, each with its `similarity` and "
    "`explanation`. They raised no alert and no event. An array (empty when none) on a complete "
    "pep_sanction_check or banned_disqualified_persons check, null on other checks. Omitted or false: no "
    "`near_misses` key.")}
LAUNCH_RULES = ("Pre-flight runs before anything is written or charged: 404 unknown entity, 400 invalid body "
                "(field paths such as config.pep_sanction_check.similarity_threshold) or missing subject data, "
                "409 archived entity or program, 403 an operation the account is not entitled to, 402 credit "
                "that cannot cover the total. 503 (Retry-After) when background processing is unavailable. "
                "One type: the check; several: a `group` parent with `children` in requested order.")


def launch_envelope(check: Check) -> dict:
    # Built from the values (not from the ORM object), so that no relationship is loaded for the answer.
    children = [LaunchChildOut(uuid=c.uuid, check_type=c.check_type, status=c.status, config=c.config,
                               detail_url=c.api_path) for c in check.children] if check.is_group else []
    data = LaunchOut(uuid=check.uuid, check_number=check.check_number, check_type=check.check_type,
                     status=check.status, config=None if check.is_group else check.config,
                     detail_url=check.api_path, children=children).model_dump(mode="json")
    if check.is_group:
        data.pop("config", None)
    return {"data": data, "api_reference": g.api_reference}


@bp.post("/entities/<uuid:entity_uuid>/checks")
@endpoint(summary="Launch screening checks on an entity", tag=TAG, body=EntityCheckLaunch, response=LaunchOut,
          status=202, errors=[400, 402, 403, 404, 409, 422, 503], description=LAUNCH_RULES)
def launch_entity_checks(entity_uuid: uuid.UUID, body: dict):
    check = services.launch_entity_checks(actor(), entity_uuid, body)
    envelope = launch_envelope(check)  # from the flushed rows: after the commit they would be read again
    commit()
    return envelope, 202


@bp.post("/adhoc-checks")
@endpoint(summary="Launch checks on a freeform subject", tag=TAG, body=AdhocCheckLaunch, response=LaunchOut,
          status=202, errors=[400, 402, 403, 422, 503],
          description=LAUNCH_RULES.replace("404 unknown entity, ", "").replace(
              "409 archived entity or program, ", "") + " Adhoc checks raise no events.")
def launch_adhoc_checks(body: dict):
    check = services.launch_adhoc_checks(actor(), body)
    envelope = launch_envelope(check)
    commit()
    return envelope, 202


def _show(schema, check_uuid: uuid.UUID, kind: str):
    with_near_misses = queries.show_params(request.args)
    check = queries.get_check(actor(), check_uuid, kind=kind)
    body, status = single(schema, check)
    if with_near_misses:
        body["data"]["near_misses"] = queries.near_misses(check)
    else:
        body["data"].pop("near_misses", None)
    return body, status


@bp.get("/checks/<uuid:check_uuid>")
@endpoint(summary="Show an entity check", tag=TAG, response=CheckShowOut, errors=[400, 404], query=SHOW_QUERY)
def show_check(check_uuid: uuid.UUID):
    return _show(CheckShowOut, check_uuid, "entity")


@bp.get("/entities/<uuid:entity_uuid>/checks")
@endpoint(summary="List an entity's checks", tag=TAG, response=CheckOut, is_list=True, errors=[400, 404],
          query=LIST_QUERY, description="Newest first; a group launch appears once (its children inside).")
def list_entity_checks(entity_uuid: uuid.UUID):
    return listing(CheckOut, queries.list_entity_checks(actor(), entity_uuid, queries.list_params(request.args)))


@bp.get("/adhoc-checks/<uuid:adhoc_check_uuid>")
@endpoint(summary="Show an adhoc check", tag=TAG, response=AdhocCheckShowOut, errors=[400, 404], query=SHOW_QUERY)
def show_adhoc_check(adhoc_check_uuid: uuid.UUID):
    return _show(AdhocCheckShowOut, adhoc_check_uuid, "adhoc")


@bp.get("/adhoc-checks")
@endpoint(summary="List adhoc checks", tag=TAG, response=AdhocCheckOut, is_list=True, errors=[400],
          query=LIST_QUERY)
def list_adhoc_checks():
    return listing(AdhocCheckOut, queries.list_adhoc_checks(actor(), queries.list_params(request.args)))


def _pdf(check_uuid: uuid.UUID, kind: str):
    outcome = reports.pdf_download(actor(), "check_pdf", check_uuid, check_kind=kind)
    if isinstance(outcome, tuple):
        return attachment(*outcome)
    commit()
    return accepted_job(outcome)


PDF_DESCRIPTION = ("The report is rendered in the request when it is small (HEAVY_PDF_SYNC_ITEMS: results, events "
                   "and checks printed). A larger one is rendered by a background job: 202 with the job "
                   "(`Location`: its status resource), its `result_url` gives the PDF once complete; a second "
                   "request while it runs gets the same job, and an unchanged report is served from the stored "
                   "file instead of being rendered again. Too much heavy work waiting or done recently by the "
                   "account: 429 (Retry-After).")


@bp.get("/checks/<uuid:check_uuid>/pdf")
@endpoint(summary="Printable report of an entity check (PDF)", tag=TAG, errors=[404, 503], accepted=True,
          description=PDF_DESCRIPTION, produces={"application/pdf": {"type": "string", "format": "binary"}})
def check_report_pdf(check_uuid: uuid.UUID):
    return _pdf(check_uuid, "entity")


@bp.get("/adhoc-checks/<uuid:adhoc_check_uuid>/pdf")
@endpoint(summary="Printable report of an adhoc check (PDF)", tag=TAG, errors=[404, 503], accepted=True,
          description=PDF_DESCRIPTION, produces={"application/pdf": {"type": "string", "format": "binary"}})
def adhoc_check_report_pdf(adhoc_check_uuid: uuid.UUID):
    return _pdf(adhoc_check_uuid, "adhoc")
