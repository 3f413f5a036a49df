from __future__ import annotations

import uuid

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.core.transactions import commit
from app.notes import queries, services
from app.notes.schemas import NoteCreate, NoteDeletedOut, NoteOut, NoteUpdate

TAG = "Notes"
LIST_QUERY = {
    "filter[entity_uuid]": "notes of the entity",
    "filter[event_uuid]": "notes attached to the event",
    "filter[program_uuid]": "notes of entities in the program",
    "filter[created_by]": "user | api_key: written by any portal user, or by any API key, of the account",
    "filter[created_by_user_uuid]": "written by this portal user",
    "filter[created_by_api_key_uuid]": "written by this API key",
    "filter[created_at_from]": "inclusive lower bound on created_at (ISO 8601 date-time)",
    "filter[created_at_to]": "inclusive upper bound on created_at (ISO 8601 date-time; a bare date covers the day)",
    "sort": "created_at, updated_at (prefix - for descending; default -created_at)",
    "archived": "true: only archived; false: only non-archived; omitted: both",
}
EDIT_RULES = ("A note written by an API key can be changed by any API key of the account; a note written by a "
              "portal user cannot be changed through the API (403); an immutable note answers 403. "
              "A note of an archived entity or program, or an archived note, answers 409.")


@bp.post("/entities/<uuid:entity_uuid>/notes")
@endpoint(summary="Add a note to an entity", tag=TAG, body=NoteCreate, response=NoteOut, status=201,
          errors=[400, 403, 404, 409, 422],
          description="The note is attributed to the calling API key (created_by.type api_key).")
def create_note(entity_uuid: uuid.UUID, body: dict):
    note = services.create_note(actor(), entity_uuid, body)
    commit()
    return single(NoteOut, note, 201)


@bp.get("/notes")
@endpoint(summary="List notes", tag=TAG, response=NoteOut, is_list=True, errors=[400], query=LIST_QUERY,
          description="A filter uuid that does not exist on the account gives an empty page.")
def list_notes():
    page = queries.list_notes(actor(), queries.list_params(request.args))
    return listing(NoteOut, page)


@bp.get("/notes/<uuid:note_uuid>")
@endpoint(summary="Show a note", tag=TAG, response=NoteOut, errors=[404])
def show_note(note_uuid: uuid.UUID):
    return single(NoteOut, queries.get_note(actor(), note_uuid))


@bp.patch("/notes/<uuid:note_uuid>")
@endpoint(summary="Update a note", tag=TAG, body=NoteUpdate, response=NoteOut, errors=[400, 403, 404, 409],
          description=EDIT_RULES)
def update_note(note_uuid: uuid.UUID, body: dict):
    note = services.update_note(actor(), note_uuid, body)
    commit()
    return single(NoteOut, note)


@bp.delete("/notes/<uuid:note_uuid>")
@endpoint(summary="Delete a note", tag=TAG, response=NoteDeletedOut, errors=[403, 404, 409],
          description="Soft delete: the note is returned once with deleted_at, then answers 404; it can be "
                      "restored in the portal for 30 days. " + EDIT_RULES)
def delete_note(note_uuid: uuid.UUID):
    note = services.delete_note(actor(), note_uuid)
    commit()
    return single(NoteDeletedOut, note)
