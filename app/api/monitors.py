from __future__ import annotations

import uuid

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.monitors import queries, services
from app.monitors.schemas import (MonitorCreate, MonitorDeletedOut, MonitorOut, MonitorRunOut, MonitorRunRequest,
                                  MonitorUpdate, ProgramRunRequest)

TAG = "Monitors"
LIST_QUERY = {"filter[status]": "active | paused", "filter[process_status]": "pending | processing | failed | paused",
              "filter[monitor_check_type]": "pep_sanction_check | banned_disqualified_persons",
              "filter[schedule]": "a schedule value",
              "sort": "created_at, last_run_at, monitor_name (prefix - for descending; default -last_run_at, "
                      "never-run monitors last)"}
MID_RUN = "A monitor whose process_status is pending, processing or paused: 409."


@bp.post("/programs/<uuid:program_uuid>/monitors")
@endpoint(summary="Create a monitor", tag=TAG, body=MonitorCreate, response=MonitorOut, status=201,
          errors=[403, 404, 409, 422])
def create_monitor(program_uuid: uuid.UUID, body: dict):
    monitor = services.create_monitor(actor(), program_uuid, body)
    commit()
    return single(MonitorOut, monitor, 201)


@bp.get("/programs/<uuid:program_uuid>/monitors")
@endpoint(summary="List a program's monitors", tag=TAG, response=MonitorOut, is_list=True, errors=[404],
          query=LIST_QUERY)
def list_monitors(program_uuid: uuid.UUID):
    page = queries.list_monitors(actor(), program_uuid, queries.list_params(request.args))
    return listing(MonitorOut, page)


@bp.get("/monitors/<uuid:monitor_uuid>")
@endpoint(summary="Show a monitor", tag=TAG, response=MonitorOut, errors=[404])
def show_monitor(monitor_uuid: uuid.UUID):
    return single(MonitorOut, queries.get_monitor(actor(), monitor_uuid))


@bp.patch("/monitors/<uuid:monitor_uuid>")
@endpoint(summary="Update a monitor", tag=TAG, body=MonitorUpdate, response=MonitorOut, errors=[404, 409],
          description="Only supplied fields change; config is merged key by key; monitor_check_type is fixed. "
                      + MID_RUN)
def update_monitor(monitor_uuid: uuid.UUID, body: dict):
    monitor = services.update_monitor(actor(), monitor_uuid, body)
    commit()
    return single(MonitorOut, monitor)


@bp.delete("/monitors/<uuid:monitor_uuid>")
@endpoint(summary="Delete a monitor", tag=TAG, response=MonitorDeletedOut, errors=[404, 409],
          description="Soft-deletes the monitor (restorable in the portal for 30 days). " + MID_RUN)
def delete_monitor(monitor_uuid: uuid.UUID):
    monitor = services.delete_monitor(actor(), monitor_uuid)
    commit()
    return single(MonitorDeletedOut, monitor)


@bp.post("/monitors/<uuid:monitor_uuid>/run")
@endpoint(summary="Run a monitor now", tag=TAG, body=MonitorRunRequest, response=MonitorRunOut, status=202,
          errors=[402, 403, 404, 409, 422, 503],
          description="Starts a run (mode all: every live entity of the program; new: those this monitor has never "
                      "screened), or resumes the run paused for credit. 409: the monitor or its program is paused "
                      "(or archived), or a run is under way. 402: the balance does not pay for one entity.")
def run_monitor(monitor_uuid: uuid.UUID, body: dict):
    run = services.run_monitor(actor(), monitor_uuid, body)
    commit()
    return single(MonitorRunOut, run, 202)


@bp.get("/monitors/<uuid:monitor_uuid>/runs")
@endpoint(summary="List a monitor's runs", tag=TAG, response=MonitorRunOut, is_list=True, errors=[404],
          query={"sort": "created_at (prefix - for descending; default -created_at)"})
def list_monitor_runs(monitor_uuid: uuid.UUID):
    page = queries.list_runs(actor(), monitor_uuid, queries.run_list_params(request.args))
    return listing(MonitorRunOut, page)


@bp.post("/programs/<uuid:program_uuid>/runs")
@endpoint(summary="Screen a program's entities now", tag=TAG, body=ProgramRunRequest, response=MonitorRunOut,
          status=202, errors=[400, 402, 403, 404, 409, 422, 503],
          description="A one-off run (no monitor) of pep_sanction_check or banned_disqualified_persons over every "
                      "live entity of the program, or the entity_uuids given: screened in the background like a "
                      "monitor's run, charged per entity screened, events only for what the entity's earlier "
                      "results did not already raise. Follow it with GET /monitor-runs/{uuid}. 402: the balance "
                      "does not pay for every entity; 409: the program is paused or archived.")
def screen_program(program_uuid: uuid.UUID, body: dict):
    run = services.screen_program(actor(), program_uuid, body)
    commit()
    return single(MonitorRunOut, run, 202)


@bp.get("/programs/<uuid:program_uuid>/runs")
@endpoint(summary="List the runs over a program's entities", tag=TAG, response=MonitorRunOut, is_list=True,
          errors=[404], query={"sort": "created_at (prefix - for descending; default -created_at)"},
          description="Its monitors' runs and its one-off runs (monitor_uuid null).")
def list_program_runs(program_uuid: uuid.UUID):
    page = queries.list_program_runs(actor(), program_uuid, queries.run_list_params(request.args))
    return listing(MonitorRunOut, page)


@bp.get("/monitor-runs/<uuid:run_uuid>")
@endpoint(summary="Show a monitor run", tag=TAG, response=MonitorRunOut, errors=[404],
          description="Its progress is readable while it runs (entities_processed of entities_total).")
def show_monitor_run(run_uuid: uuid.UUID):
    return single(MonitorRunOut, queries.get_run(actor(), run_uuid))
