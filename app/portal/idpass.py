"""IDPass in the portal: "Verify identity" on an individual (or an adhoc IDPass), the launch form generated from the
launch schema's choices (the document types, the link's validity range, the delivery methods) with its cost by the
number of document steps, the account's IDPasses with filters, and the analyst's IDPass page: the status refreshed
while the person is on the hosted flow, then each document step's images, fields and results side by side, the
selfie and liveness, the reasons, the timeline and the consent. The IDPass services do the work, as for the API."""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from annotated_types import Ge, Le
from flask import Response, flash, redirect, request, url_for
from flask_login import login_required

from app import reports
from app.accounts.models import Account
from app.billing import services as billing
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid, ServiceUnavailable
from app.core.pdf import attachment
from app.core.transactions import commit, rollback
from app.entities.queries import get_entity
from app.extensions import db
from app.idchecks.fields import CHOICE_LABELS, data_fields
from app.events import queries as event_queries
from app.idpass import images, queries, services
from app.idpass.models import SOURCES, STATUSES, STEPS, VERIFICATION_STATUSES
from app.idpass.schemas import IdPassConfig
from app.idpass.rules import DESCRIPTIONS as REASON_DESCRIPTIONS
from app.portal import bp, count_of
from app.portal.base import commit_and_flash, is_htmx, parse_listing, portal_actor, render, role_required
from app.portal.checkforms import literal_values
from app.providers.id_base import CHECK_TYPE_LABELS
from app.providers.id_types import ID_TYPES, IDPASS_DOCUMENTS, IDPASS_MAX_STEPS, idpass_product
from app.providers.sms import normalise_au_mobile

# ---------------------------------------------------------------- the launch form, from the schema

_CONFIG = IdPassConfig.model_fields


def _bounds(name: str) -> tuple[int, int]:
    metadata = _CONFIG[name].metadata
    return (next(m.ge for m in metadata if isinstance(m, Ge)), next(m.le for m in metadata if isinstance(m, Le)))


VALIDITY_MIN, VALIDITY_MAX = _bounds("link_validity_days")
VALIDITY_DEFAULT = 7
DELIVERY_METHODS = literal_values(_CONFIG["delivery_method"].annotation)
DELIVERY_LABELS = {"sms": "Send the link by SMS", "manual": "I will pass the link on myself"}
DOCUMENTS = [(d.name, d.label) for d in IDPASS_DOCUMENTS.values()]
DEFAULT_DOCUMENT_1 = ["passport", "licence"]
IDENTITY = ("first_name", "middle_name", "last_name", "dob")
FLAGS = ("check_liveness", "require_id_photo", "return_verification_images")
# The portal's list parameters -> the API's (queries.list_params).
LIST_ARGS = {"status": "filter[status]", "verification_status": "filter[verification_status]",
             "source": "filter[source]", "page": "page"}
_INDEX = re.compile(r"\.\d+$")
_STEP_WORD = re.compile(r"\bdocument_(\d)\b")  # the API's step names, as the form calls them


def _product_prices() -> dict[int, int]:
    table = billing.prices()
    return {n: table[idpass_product(n)] for n in range(1, IDPASS_MAX_STEPS + 1)}


def _steps_filled(values: dict[str, Any]) -> int:
    return sum(1 for s in STEPS if values.get(f"config.{s}"))


def _prefill(entity) -> dict[str, Any]:
    """The form's first values: the entity's identity, document step 1 with a passport or a licence, liveness on,
    a week's link; SMS when the entity has an Australian mobile on record."""
    values: dict[str, Any] = {"config.document_1": list(DEFAULT_DOCUMENT_1), "config.check_liveness": True,
                              "config.require_id_photo": False, "config.return_verification_images": True,
                              "config.link_validity_days": str(VALIDITY_DEFAULT), "config.delivery_method": "manual"}
    if entity is not None:
        values.update({"data.first_name": entity.first_name or "", "data.middle_name": entity.middle_name or "",
                       "data.last_name": entity.last_name or "",
                       "data.dob": entity.birth_date.isoformat() if entity.birth_date else ""})
        mobile = next((m for m in (normalise_au_mobile(p) for p in (entity.phone1, entity.phone2, entity.phone3,
                                                                    entity.phone4) if p) if m), None)
        if mobile:
            values.update({"config.delivery_method": "sms", "config.delivery_phone": mobile})
    return values


def _posted(form) -> dict[str, Any]:
    """The posted form as the form's values (what is shown again when the service refuses it)."""
    values: dict[str, Any] = {f"data.{k}": form.get(f"data.{k}", "").strip() for k in IDENTITY}
    for step in STEPS:
        values[f"config.{step}"] = [t for t in form.getlist(f"config.{step}") if t]
    for flag in FLAGS:
        values[f"config.{flag}"] = form.get(f"config.{flag}") == "yes"
    for key in ("id_photo_purpose", "link_validity_days", "delivery_method", "delivery_phone"):
        values[f"config.{key}"] = form.get(f"config.{key}", "").strip()
    values["oac"] = form.get("oac", "").strip()
    return values


def _body(values: dict[str, Any]) -> dict[str, Any]:
    """The form's values as the API's launch body, so that the service's errors name the form's inputs."""
    days = values["config.link_validity_days"]
    config: dict[str, Any] = {
        "link_validity_days": int(days) if days.isdigit() else (days or None),
        "document_1": values["config.document_1"],
        **{s: values[f"config.{s}"] for s in STEPS[1:] if values[f"config.{s}"]},
        **{f: values[f"config.{f}"] for f in FLAGS},
        "delivery_method": values["config.delivery_method"] or None,
    }
    if config["require_id_photo"]:
        config["id_photo_purpose"] = values["config.id_photo_purpose"] or None
    if config["delivery_method"] == "sms":
        config["delivery_phone"] = values["config.delivery_phone"] or None
    body: dict[str, Any] = {"data": {k: values[f"data.{k}"] or None for k in IDENTITY}, "config": config}
    if values.get("oac"):
        body["oac"] = values["oac"]
    return body


def _field_errors(errors: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """The service's errors by the form's input names: `config.document_1.0` (a type of the list) lands on its
    step's checkboxes; "document_1" in a message reads "step 1", as the form says."""
    out: dict[str, list[str]] = {}
    for key, messages in (errors or {}).items():
        name = _INDEX.sub("", key)
        out.setdefault(name, [])
        out[name] += [m for m in (_STEP_WORD.sub(r"step \1", m) for m in messages) if m not in out[name]]
    return out


FORM_INPUTS = {*(f"data.{k}" for k in IDENTITY), *(f"config.{s}" for s in STEPS), *(f"config.{f}" for f in FLAGS),
               "config.id_photo_purpose", "config.link_validity_days", "config.delivery_method",
               "config.delivery_phone", "oac"}


def _form_page(actor, entity, *, status: int = 200, values: dict | None = None, errors: dict | None = None,
               message: str | None = None, blocked: bool = False):
    account = db.session.get(Account, actor.account_id)
    values = values if values is not None else _prefill(entity)
    errors = _field_errors(errors)
    prices = _product_prices()
    steps = _steps_filled(values)
    return render("idpass/form.html", status=status, entity=entity, program=entity.program if entity else None,
                  values=values, errors=errors, message=message, blocked=blocked,
                  other_errors=[(k, m) for k, ms in errors.items() if k not in FORM_INPUTS for m in ms],
                  entitled=services.entitled(account),
                  identities=list(account.dvs_identities), documents=DOCUMENTS, steps=STEPS,
                  validity=(VALIDITY_MIN, VALIDITY_MAX), delivery=[(m, DELIVERY_LABELS.get(m, m))
                                                                    for m in DELIVERY_METHODS],
                  prices=prices, steps_filled=steps, price=prices.get(max(steps, 1)),
                  balance=billing.balance(actor))


def _submit(actor, entity):
    values = _posted(request.form)
    body = _body(values)
    try:
        if entity is not None:
            idpass = services.launch_for_entity(actor, entity.uuid, body, link_base=request.host_url)
        else:
            idpass = services.launch_adhoc(actor, body, link_base=request.host_url)
        commit()
    except Invalid as exc:
        rollback()
        return _form_page(actor, entity, status=422, values=values, errors=exc.errors,
                          message=exc.message if not exc.errors else "Some details need attention: each is said "
                                                                     "beside its field.")
    except (InsufficientCredit, Forbidden, Conflict, ServiceUnavailable) as exc:
        rollback()
        return _form_page(actor, entity, status=exc.status, values=values, message=exc.message)
    credits = f"{count_of(idpass.credits, 'credit')} charged"
    if idpass.delivery_method == "sms":
        flash(f"IDPass launched ({credits}). The link is being sent by SMS to "
              f"{services.mask_phone(idpass.delivery_phone)}; it is also below, to copy.", "success")
    else:
        flash(f"IDPass launched ({credits}). Copy the link below and send it to {_person(idpass)}: it works until "
              f"{idpass.expires_at:%d %b %Y}.", "success")
    return redirect(url_for("portal.idpasses_show", idpass_uuid=idpass.uuid))


@bp.route("/entities/<uuid:entity_uuid>/idpasses/new", methods=["GET", "POST"])
@role_required("analyst")
def idpasses_new(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = get_entity(actor, entity_uuid)
    refusal = services.launch_refusal(entity)
    if refusal:
        return _form_page(actor, entity, status=409, message=refusal, blocked=True)
    return _submit(actor, entity) if request.method == "POST" else _form_page(actor, entity)


@bp.route("/idpasses/new", methods=["GET", "POST"])
@role_required("analyst")
def idpasses_adhoc_new():
    actor = portal_actor()
    return _submit(actor, None) if request.method == "POST" else _form_page(actor, None)


# ---------------------------------------------------------------- the list, the entity's card

@bp.get("/idpasses")
@login_required
def idpasses_list():
    args = {k: request.args.get(k, "").strip() for k in LIST_ARGS if request.args.get(k, "").strip()}
    params, args = parse_listing(queries.list_params, args, LIST_ARGS)
    page = queries.list_idpasses(portal_actor(), params)
    return render("idpass/list.html", "idpass/_table.html", page=page, args=args, statuses=STATUSES,
                  verification_statuses=VERIFICATION_STATUSES, sources=SOURCES)


@bp.app_template_global("entity_idpasses")
def entity_idpasses(entity) -> list:
    """The entity page's IDPass card: the entity's IDPasses, newest first."""
    return queries.list_entity_idpasses(portal_actor(), entity.uuid).items


@bp.app_template_global("idpass_person")
def _person(idpass) -> str:
    identity = idpass.requested_identity or {}
    return " ".join(identity[k] for k in ("first_name", "middle_name", "last_name") if identity.get(k)) or "—"


# ---------------------------------------------------------------- the IDPass page

FIELD_LABELS = {"first_name": "First name", "middle_name": "Middle name", "last_name": "Last name",
                "dob": "Date of birth", "document_number": "Document number", "expiry_date": "Expiry date",
                "card_number": "Card number", "state": "State", "gender": "Sex", "nationality": "Nationality",
                "country": "Issuing country", "reference_number": "Reference number",
                "individual_reference_number": "Individual reference number", "colour": "Card colour"}
CHECK_LABELS = {"document_verified": "Every document verified with its issuer",
                "face_matched": "The face matches the documents' photos",
                "identity_consistent": "The documents name the same person",
                "requested_identity_match": "The documents name the person asked for"}


@dataclass
class FieldRow:
    name: str
    label: str
    value: Any
    changed: bool = False
    read: Any = None  # what was read from the document, when the person changed it


@dataclass
class StepView:
    key: str
    title: str
    allowed: list[str]
    summary: dict
    images: list = field(default_factory=list)
    fields: list[FieldRow] = field(default_factory=list)
    has_photo: bool = True  # the document chosen carries a photo (compared with the selfie)


def _label(name: str) -> str:
    return FIELD_LABELS.get(name) or name.replace("_", " ").capitalize()


def _field_rows(summary: dict) -> list[FieldRow]:
    """The fields as confirmed (masked), labelled as the ID type's form labels them, each marked when the person
    changed what was read (`changes`, as the flow records them: {field, read, confirmed}, masked)."""
    doc = IDPASS_DOCUMENTS.get(summary.get("document_type") or "")
    labels = {f.name: f.label for f in data_fields(doc.id_type)} if doc and doc.id_type in ID_TYPES else {}
    fields = summary.get("fields") or {}
    changed = {c["field"]: c["read"] for c in summary.get("changes") or []}
    names = list(dict.fromkeys([*fields, *changed]))
    return [FieldRow(n, labels.get(n) or _label(n), _word(fields.get(n)), n in changed, _word(changed.get(n)))
            for n in names]


def _word(value: Any) -> Any:
    """A choice code as its words (F: Female), as the ID check's page shows it."""
    return CHOICE_LABELS.get(value, value) if isinstance(value, str) else value


def _steps(idpass) -> list[StepView]:
    summaries = idpass.document_summary or {}
    out = []
    for i, step in enumerate(STEPS, start=1):
        allowed = (idpass.document_allowed_types or {}).get(step) or []
        summary = summaries.get(step) or {}
        if not allowed and not summary:
            continue
        out.append(StepView(key=step, title=f"Document {i}", summary=summary,
                            allowed=[IDPASS_DOCUMENTS[t].label if t in IDPASS_DOCUMENTS else t for t in allowed],
                            images=_images_of(idpass, step), fields=_field_rows(summary),
                            has_photo=getattr(IDPASS_DOCUMENTS.get(summary.get("document_type") or ""),
                                              "has_photo", True)))
    return out


def _images_of(idpass, image_type: str) -> list:
    """Every stored attempt of one type, in order (the current one last), without the purged ones."""
    return sorted((i for i in idpass.images if i.type == image_type and i.purged_at is None),
                  key=lambda i: (i.attempt, i.id))


def _when(value) -> datetime | None:
    if isinstance(value, datetime) or value is None:
        return value
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


_ACRONYMS = re.compile(r"\b(sms|id|mrz|dvs)\b", re.I)


def _event_label(event: str) -> str:
    """`sms_resend_requested` -> "SMS resend requested"."""
    return _ACRONYMS.sub(lambda m: m.group(1).upper(), event.replace("_", " ").capitalize())


def _timeline(idpass) -> list[dict]:
    return [{"at": _when(e.get("at")), "event": e.get("event", ""), "label": _event_label(e.get("event", "")),
             "message": e.get("message", ""), "detail": e.get("detail")} for e in (idpass.log or [])]


def _mobile(phone: str | None) -> str:
    """04xxxxxxxx as it is read aloud: 0412 345 678."""
    return f"{phone[:4]} {phone[4:7]} {phone[7:]}" if phone and len(phone) == 10 else (phone or "")


def _status_context(idpass) -> dict:
    summaries = idpass.document_summary or {}
    return {"idpass": idpass, "steps_done": sum(1 for s in idpass.steps if summaries.get(s)),
            "last_event": _timeline(idpass)[-1] if idpass.log else None}


def _page_context(idpass) -> dict:
    liveness = (idpass.validation_summary or {}).get("liveness") or {}
    return {**_status_context(idpass), "entity": idpass.entity, "program": idpass.program, "steps": _steps(idpass),
            "liveness": liveness, "selfies": _images_of(idpass, "selfie"),
            "liveness_frames": sorted((i for i in idpass.images if i.type.startswith("liveness_")
                                       and i.purged_at is None), key=lambda i: i.id),
            "id_photos": _images_of(idpass, "id_photo"),
            "id_photo": (idpass.document_summary or {}).get("id_photo") or {},
            "checks": [(CHECK_LABELS[k], v) for k, v in (idpass.validation_summary or {}).items()
                       if k in CHECK_LABELS], "timeline": _timeline(idpass), "consent": idpass.consent or {},
            "document_labels": {d.name: d.label for d in IDPASS_DOCUMENTS.values()},
            "check_type_labels": CHECK_TYPE_LABELS, "when": _when,
            "can_resend": services.resend_refusal(idpass) is None,
            "phone": _mobile(idpass.delivery_phone)}


def review_context(idpass) -> dict:
    """What the event page of an IDPass under review shows of it (templates/idpass/_review_card.html)."""
    page = _page_context(idpass)
    return {"idpass": idpass, "steps": page["steps"], "selfies": page["selfies"], "liveness": page["liveness"],
            "checks": page["checks"], "document_labels": page["document_labels"],
            "reasons": [(code, REASON_DESCRIPTIONS.get(code, code)) for code in idpass.reasons or []]}


@bp.get("/idpasses/<uuid:idpass_uuid>")
@login_required
def idpasses_show(idpass_uuid: uuid.UUID):
    actor = portal_actor()
    idpass = queries.get_idpass(actor, idpass_uuid)
    return render("idpass/show.html", **_page_context(idpass),
                  review_event=event_queries.id_check_event(actor, idpass.id_check_id))


@bp.get("/idpasses/<uuid:idpass_uuid>/status")
@login_required
def idpasses_status(idpass_uuid: uuid.UUID):
    """The status block the page asks for every 3 s while the IDPass is in flight. Once terminal it carries no
    trigger (the polling stops) and, for htmx, reloads the page once: the results are then all there."""
    idpass = queries.get_idpass(portal_actor(), idpass_uuid)
    response = render("idpass/_status.html", "idpass/_status.html", **_status_context(idpass))
    if is_htmx() and idpass.completed:
        response.headers["HX-Refresh"] = "true"
    return response


@bp.get("/idpasses/<uuid:idpass_uuid>/images/<int:image_id>")
@login_required
def idpasses_image(idpass_uuid: uuid.UUID, image_id: int):
    data, content_type = images.portal_image(portal_actor(), idpass_uuid, image_id)
    return Response(data, content_type=content_type, headers={"Cache-Control": "private, no-store",
                                                              "X-Content-Type-Options": "nosniff"})


@bp.get("/idpasses/<uuid:idpass_uuid>/certificate.pdf")
@login_required
def idpasses_certificate(idpass_uuid: uuid.UUID):
    response = attachment(*reports.idpass_certificate(portal_actor(), idpass_uuid))
    commit()  # the certificate is issued (stored) when first asked for
    return response


@bp.post("/idpasses/<uuid:idpass_uuid>/cancel")
@role_required("analyst")
def idpasses_cancel(idpass_uuid: uuid.UUID):
    commit_and_flash(lambda: services.cancel(portal_actor(), idpass_uuid),
                     lambda p: "IDPass cancelled: the link no longer works." + (
                         " Nothing was done with it, so its credits were refunded." if p.opened_at is None else ""))
    return redirect(url_for("portal.idpasses_show", idpass_uuid=idpass_uuid))


@bp.post("/idpasses/<uuid:idpass_uuid>/resend")
@role_required("analyst")
def idpasses_resend(idpass_uuid: uuid.UUID):
    commit_and_flash(lambda: services.resend_sms(portal_actor(), idpass_uuid),
                     lambda p: f"The link is being sent again by SMS to {services.mask_phone(p.delivery_phone)}.")
    return redirect(url_for("portal.idpasses_show", idpass_uuid=idpass_uuid))

