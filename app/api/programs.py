from __future__ import annotations

import uuid

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.programs import queries, services
from app.programs.schemas import ProgramCreate, ProgramDeletedOut, ProgramOut, ProgramUpdate

TAG = "Programs"
LIST_QUERY = {"filter[status]": "active | paused | archived", "filter[program_name]": "substring of the name",
              "sort": "created_at, updated_at, program_name (prefix - for descending; default -created_at)",
              "archived": "true: only archived; false or omitted: hide archived programs"}


@bp.post("/programs")
@endpoint(summary="Create a program", tag=TAG, body=ProgramCreate, response=ProgramOut, status=201,
          errors=[400, 403, 409, 422])
def create_program(body: dict):
    program = services.create_program(actor(), body)
    commit()
    return single(ProgramOut, program, 201)


@bp.get("/programs")
@endpoint(summary="List programs", tag=TAG, response=ProgramOut, is_list=True, errors=[400], query=LIST_QUERY)
def list_programs():
    page = queries.list_programs(actor(), queries.list_params(request.args))
    return listing(ProgramOut, page)


@bp.get("/programs/<uuid:program_uuid>")
@endpoint(summary="Show a program", tag=TAG, response=ProgramOut, errors=[404])
def show_program(program_uuid: uuid.UUID):
    return single(ProgramOut, queries.get_program(actor(), program_uuid))


@bp.patch("/programs/<uuid:program_uuid>")
@endpoint(summary="Update a program", tag=TAG, body=ProgramUpdate, response=ProgramOut, errors=[400, 404, 409],
          description="Only supplied fields change. Status moves freely between active, paused and archived; "
                      "an archived program only accepts a status change.")
def update_program(program_uuid: uuid.UUID, body: dict):
    program = services.update_program(actor(), program_uuid, body)
    commit()
    return single(ProgramOut, program)


@bp.delete("/programs/<uuid:program_uuid>")
@endpoint(summary="Delete a program", tag=TAG, response=ProgramDeletedOut, errors=[404],
          description="Soft-deletes the program, its entities and their notes; restorable in the portal for 30 days.")
def delete_program(program_uuid: uuid.UUID):
    program = services.delete_program(actor(), program_uuid)
    commit()
    return single(ProgramDeletedOut, program)
