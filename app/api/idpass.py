"""IDPass: remote identity verification through a hosted link. Thin: the IDPass services do the work."""
from __future__ import annotations

import uuid

from flask import Response, request

from app import reports
from app.api.base import actor, bp, endpoint, listing, single
from app.core.pdf import attachment
from app.core.transactions import commit
from app.idpass import images, queries, services
from app.idpass.models import IMAGE_TYPES
from app.idpass.schemas import IdPassLaunch, IdPassLaunchOut, IdPassListItem, IdPassOut

TAG = "IDPass"
LAUNCH_RULES = (
    "202 with the launch subset; poll GET /idpasses/{uuid} until completed. Charged at creation by the number of "
    "document steps (idpass_1..idpass_3 in the price table). 400: field errors with dotted paths (config.document_2: "
    "needs document_1, a type already allowed in an earlier step; config.id_photo_purpose with require_id_photo; "
    "config.delivery_phone: an Australian mobile 04xxxxxxxx for sms; data.first_name/last_name when there is no "
    "name to verify; data.dob not the entity's; an unknown oac). 403: no IDPass product, no DVS identity (OAC), or "
    "one without a privacy policy URL. 402: credit. 503: sms with the job queue down (nothing charged).")
LIST_QUERY = {"filter[status]": "new, opened, in_progress, complete, expired, failed, cancelled",
              "filter[verification_status]": "passed, review, failed",
              "filter[source]": "entity or adhoc",
              "filter[program_uuid]": "a program's uuid", "filter[entity_uuid]": "an entity's uuid",
              "filter[created_after]": "inclusive lower bound on created_at (ISO 8601)",
              "filter[created_before]": "inclusive upper bound on created_at (ISO 8601)",
              "filter[completed_after]": "inclusive lower bound on completed_at (ISO 8601)",
              "filter[completed_before]": "inclusive upper bound on completed_at (ISO 8601)",
              "sort": "created_at (default -created_at), completed_at, status; prefix - for descending",
              "archived": "true: only archived; false: only not archived; omitted: both"}


@bp.post("/entities/<uuid:entity_uuid>/idpasses")
@endpoint(summary="Launch an IDPass for an entity", tag=TAG, body=IdPassLaunch, response=IdPassLaunchOut, status=202,
          errors=[400, 402, 403, 404, 409, 422, 503],
          description=LAUNCH_RULES + " 409: the entity is not an individual, or it or its program is archived.")
def launch_entity_idpass(entity_uuid: uuid.UUID, body: dict):
    idpass = services.launch_for_entity(actor(), entity_uuid, body, link_base=request.host_url)
    commit()
    return single(IdPassLaunchOut, idpass, 202)


@bp.post("/idpasses")
@endpoint(summary="Launch an adhoc IDPass", tag=TAG, body=IdPassLaunch, response=IdPassLaunchOut, status=202,
          errors=[400, 402, 403, 422, 503], description=LAUNCH_RULES)
def launch_adhoc_idpass(body: dict):
    idpass = services.launch_adhoc(actor(), body, link_base=request.host_url)
    commit()
    return single(IdPassLaunchOut, idpass, 202)


@bp.get("/idpasses")
@endpoint(summary="List the account's IDPasses", tag=TAG, response=IdPassListItem, is_list=True, errors=[400],
          query=LIST_QUERY)
def list_idpasses():
    return listing(IdPassListItem, queries.list_idpasses(actor(), queries.list_params(request.args)))


@bp.get("/idpasses/<uuid:idpass_uuid>")
@endpoint(summary="Show an IDPass", tag=TAG, response=IdPassOut, errors=[404],
          description="Poll until completed is true, then read verification_status (passed, review, failed).")
def show_idpass(idpass_uuid: uuid.UUID):
    return single(IdPassOut, queries.get_idpass(actor(), idpass_uuid))


@bp.get("/idpasses/<uuid:idpass_uuid>/images/<string:image_type>")
@endpoint(summary="An image of an IDPass", tag=TAG, errors=[404],
          description="The bytes of one image named in images[] (" + ", ".join(IMAGE_TYPES) + "): only when the "
                      "IDPass was launched with return_verification_images, and until the program's data retention "
                      "deletes it (404).",
          produces={"image/jpeg": {"type": "string", "format": "binary"},
                    "image/png": {"type": "string", "format": "binary"}})
def idpass_image(idpass_uuid: uuid.UUID, image_type: str):
    data, content_type = images.api_image(actor(), idpass_uuid, image_type)
    return Response(data, content_type=content_type, headers={
        "Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff",
        "Content-Disposition": f'inline; filename="idpass-{idpass_uuid}-{image_type}.{content_type.split("/")[1]}"'})


@bp.get("/idpasses/<uuid:idpass_uuid>/pdf")
@endpoint(summary="The IDPass's verification certificate (PDF)", tag=TAG, errors=[404, 409],
          description="Once the IDPass is terminal (409 before). Issued on the first request, then served as "
                      "stored: every download is the same file. The certificate carries a verification code: "
                      "/verify/{code} confirms a certificate is genuine and unaltered without revealing it.",
          produces={"application/pdf": {"type": "string", "format": "binary"}})
def idpass_pdf(idpass_uuid: uuid.UUID):
    pdf, filename = reports.idpass_certificate(actor(), idpass_uuid)
    commit()  # the first request issues it (code, hashes, the timeline's entry)
    return attachment(pdf, filename)
