"""The IDPass flow at its hosted link (`/v/<token>`): the person's phone, no account. Thin: `app.idpass.flow` does
the work. Every request finds the IDPass by the token's hash and locks it; an unknown or tampered token answers a
clear 404 page, an expired or cancelled IDPass a 410 page that says so, a finished one a page that says it is done.
Forms post and redirect (they work without scripts); the camera and the liveness burst are static/hosted/flow.js.
Per address: HOSTED_RATE_LIMIT requests (Flask-Limiter), so that tokens cannot be guessed by volume."""
from __future__ import annotations

from flask import current_app, jsonify, redirect, render_template, request, url_for

from app.core.errors import Invalid
from app.core.inputs import clean_form
from app.core.transactions import commit, rollback
from app.extensions import limiter
from app.hosted import bp
from app.idchecks.fields import data_fields
from app.idpass import flow, services
from app.idpass.models import IdPass
from app.providers.id_types import IDPASS_DOCUMENTS, ID_TYPES

STEP_TITLES = {"welcome": "Welcome", "consent": "Your consent", "document_1": "Your first document",
               "document_2": "Your second document", "document_3": "Your third document",
               "selfie": "A selfie that moves", "id_photo": "Your photo", "finish": "Finish"}


def _limit() -> str:
    return current_app.config["HOSTED_RATE_LIMIT"]


hosted_limit = limiter.shared_limit(_limit, scope="hosted", key_func=lambda: f"hosted:{request.remote_addr}")


def _language() -> str:
    return request.accept_languages.best_match(flow.LANGUAGES) or "en"


def _page(template: str, idpass: IdPass | None, status: int = 200, **context):
    response = current_app.make_response((render_template(f"hosted/{template}", idpass=idpass,
                                                          documents=IDPASS_DOCUMENTS, **context), status))
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the URL: never sent onwards
    response.headers["Permissions-Policy"] = "camera=(self), microphone=(), geolocation=()"
    return response


def _not_found():
    return _page("not_found.html", None, 404)


@bp.errorhandler(429)
def _throttled(_exc):
    """Past the per-address budget: the person's own page (not the portal's), saying what to do."""
    response = _page("throttled.html", None, 429)
    response.headers["Retry-After"] = "60"
    return response


def _load(token: str) -> IdPass | None:
    idpass = flow.for_token(token)
    if idpass is not None and services.expire_if_due(idpass):  # ended now, before the scheduler's next pass
        commit()
        idpass = flow.for_token(token)
    return idpass


def _ended(idpass: IdPass):
    status = 410 if idpass.status in ("expired", "cancelled") else 200
    return _page("ended.html", idpass, status)


@bp.get("/v/<token>")
@hosted_limit
def flow_page(token: str):
    idpass = _load(token)
    if idpass is None:
        return _not_found()
    if idpass.completed:
        rollback()
        return _ended(idpass)
    response = _render_step(idpass, token)
    commit()  # a liveness challenge issued for this page is kept (a reload shows the same one)
    return response


def _render_step(idpass: IdPass, token: str, *, status: int = 200, error: str | None = None,
                 errors: dict | None = None, values: dict | None = None):
    step = flow.current_step(idpass)
    order = flow.sequence(idpass)
    context = {"token": token, "step": step, "position": order.index(step) + 1 if step in order else len(order),
               "total": len(order), "title": STEP_TITLES.get(step, "Verify your identity"), "error": error,
               "errors": errors or {}, "values": values}
    if step == "consent":
        context["wording"] = flow.consent_wording(idpass)
    elif step in idpass.steps:
        state = flow.document_state(idpass, step)
        doc = IDPASS_DOCUMENTS.get(state.get("type") or "")
        context.update(state=state, document=doc, choices=[IDPASS_DOCUMENTS[t] for t in
                                                           idpass.document_allowed_types[step]],
                       max_attempts=flow.MAX_DOCUMENT_ATTEMPTS)
        if doc is not None and state.get("stage") == "confirm":
            context["fields"] = [f for f in data_fields(doc.id_type)]
            context["values"] = values if values is not None else (state.get("read") or {})
            context["id_type_label"] = ID_TYPES[doc.id_type].label
    elif step == "selfie":
        challenge = flow.challenge(idpass)
        live = (idpass.progress or {}).get("liveness") or {}
        context.update(challenge=challenge, attempts=live.get("attempts", 0), max_attempts=flow.MAX_LIVENESS_ATTEMPTS,
                       last_reasons=live.get("reasons") if live.get("attempts") and not live.get("passed") else None)
    return _page(f"step_{'document' if step in idpass.steps else step}.html", idpass, status, **context)


def _act(token: str, action):
    """Run one step's action on the locked IDPass, commit, and go back to the flow's page (post/redirect/get);
    a retryable problem re-renders the step with its message."""
    idpass = _load(token)
    if idpass is None:
        return _not_found()
    if idpass.completed:
        rollback()
        return _ended(idpass)
    try:
        clean_form(request)  # the inputs rule (app/core/inputs.py): cleaned in place, refused characters named
        action(idpass)
    except flow.FlowError as exc:
        rollback()
        idpass = flow.for_token(token)
        if exc.code == "stale":
            return redirect(url_for("hosted.flow_page", token=token), 303)
        response = _render_step(idpass, token, status=400, error=exc.message)
        commit()
        return response
    except Invalid as exc:
        rollback()
        idpass = flow.for_token(token)
        values = {k: v for k, v in request.form.items() if k != "csrf_token"}
        errors = {k.removeprefix("data."): v for k, v in (exc.errors or {}).items()}
        response = _render_step(idpass, token, status=400, errors=errors, values=values,
                                error="Check the details marked below.")
        commit()
        return response
    commit()
    return redirect(url_for("hosted.flow_page", token=token), 303)


@bp.post("/v/<token>/start")
@hosted_limit
def start(token: str):
    return _act(token, lambda p: flow.open_link(p, user_agent=request.headers.get("User-Agent")))


@bp.post("/v/<token>/consent")
@hosted_limit
def consent(token: str):
    return _act(token, lambda p: flow.give_consent(p, agreed=request.form.get("agree") == "yes",
                                                   language=_language()))


@bp.post("/v/<token>/<any(document_1, document_2, document_3):step>/type")
@hosted_limit
def document_type(token: str, step: str):
    return _act(token, lambda p: flow.choose_document(p, step, request.form.get("document_type", "")))


@bp.post("/v/<token>/<any(document_1, document_2, document_3):step>/photo")
@hosted_limit
def document_photo(token: str, step: str):
    upload = request.files.get("photo")

    def act(p):
        if upload is None or not upload.filename and not upload.content_length and upload.mimetype is None:
            raise flow.FlowError("Take a photo of the document, or choose one.", "photo")
        flow.submit_document_photo(p, step, upload.read())
    return _act(token, act)


@bp.post("/v/<token>/<any(document_1, document_2, document_3):step>/confirm")
@hosted_limit
def document_confirm(token: str, step: str):
    return _act(token, lambda p: flow.confirm_document(p, step, request.form.to_dict()))


@bp.post("/v/<token>/selfie")
@hosted_limit
def selfie(token: str):
    """The liveness burst (multipart: `frame` files with `ts` timestamps in ms): answers JSON for the script."""
    idpass = _load(token)
    if idpass is None:
        return jsonify(message="This link is not valid."), 404
    if idpass.completed:
        rollback()
        return jsonify(message="This verification has ended.", next=url_for("hosted.flow_page", token=token)), 410
    files, stamps = request.files.getlist("frame"), request.form.getlist("ts")
    try:
        if not files or len(files) != len(stamps):
            raise flow.FlowError("The camera's frames did not arrive: try again.", "frames")
        frames = [(int(float(ts)), f.read()) for ts, f in zip(stamps, files)]
        outcome = flow.submit_selfie(idpass, frames)
    except (flow.FlowError, ValueError, OverflowError) as exc:  # a frame, or a timestamp such as "inf"
        rollback()
        return jsonify(result="error", message=getattr(exc, "message", "The frames could not be read."),
                       next=url_for("hosted.flow_page", token=token)), 400
    commit()
    messages = {"passed": "Thank you: that worked.",
                "retry": "That did not work: follow the arrows, one turn at a time, and try again.",
                "done_failed": "Thank you. We could not confirm the movement: an analyst will look at it."}
    return jsonify(result=outcome, message=messages[outcome], next=url_for("hosted.flow_page", token=token))


@bp.post("/v/<token>/id-photo")
@hosted_limit
def id_photo(token: str):
    upload = request.files.get("photo")

    def act(p):
        if upload is None:
            raise flow.FlowError("Take a photo of yourself.", "photo")
        flow.submit_id_photo(p, upload.read())
    return _act(token, act)


@bp.post("/v/<token>/finish")
@hosted_limit
def finish(token: str):
    return _act(token, flow.finish)
