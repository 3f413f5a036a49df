"""The API door: authentication, idempotency, envelopes, body parsing and the OpenAPI registry."""
from __future__ import annotations

import json
from functools import wraps
from typing import Any, Callable, Iterable

from flask import Blueprint, Response, current_app, g, request
from pydantic import BaseModel, TypeAdapter

from app.accounts import services as accounts
from app.accounts.models import ApiKey
from app.core import idempotency
from app.core.actor import Actor
from app.core.errors import DomainError, Invalid, RateLimited, Unauthorized, UnsupportedMediaType
from app.core.inputs import check_text_fields, parse_json
from app.core.listing import Page
from app.core.transactions import rollback

bp = Blueprint("api", __name__, url_prefix="/api/v1")


# ------------------------------------------------------------------ authentication

def current_api_key() -> ApiKey | None:
    """The live API key presented with this request (cached on g), or None."""
    if "api_key" not in g:
        g.api_key = None
        header = request.headers.get("Authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() == "bearer" and secret.strip():
            g.api_key = accounts.find_api_key(secret.strip())
    return g.api_key


def actor() -> Actor:
    return g.actor


def rate_limit_identity(key: ApiKey | None) -> tuple[str, int]:
    """Whose budget a request spends, and its size: one budget per API key across every endpoint (the
    account's override, else DEFAULT_API_RATE_LIMIT); requests without a valid key count per address."""
    per_minute = current_app.config["DEFAULT_API_RATE_LIMIT"]
    if key is None:
        return f"ip:{request.remote_addr}", per_minute
    return f"key:{key.id}", key.account.rate_limit_per_minute or per_minute


PUBLIC_ENDPOINTS = {"api.openapi_document"}


@bp.before_request
def rate_limit() -> None:
    """Runs first: spends one request of the caller's budget (unauthenticated attempts included)."""
    limiter = current_app.extensions.get("api_rate_limiter")
    if limiter is None or not current_app.config.get("RATELIMIT_ENABLED", True):
        return
    identity, per_minute = rate_limit_identity(current_api_key())
    budget = limiter.hit(identity, per_minute)
    if budget is None:  # storage down: fail open
        return
    g.rate_limit_headers = budget.headers()
    if budget.exceeded:
        raise RateLimited(headers={"Retry-After": str(budget.reset_after)})


@bp.before_request
def authenticate() -> None:
    if request.endpoint in PUBLIC_ENDPOINTS:
        return
    key = current_api_key()
    if key is None:
        raise Unauthorized("Missing, malformed, unknown or revoked API key. Send 'Authorization: Bearer <key>'.")
    g.actor = accounts.api_key_actor(key, api_reference=g.api_reference)
    accounts.touch_api_key(key)


@bp.before_request
def refuse_control_characters_in_query() -> None:
    check_text_fields(request.args.items(multi=True))


@bp.before_request
def claim_idempotency_key() -> Response | None:
    key = request.headers.get("Idempotency-Key")
    if request.method != "POST" or key is None or "actor" not in g:
        return None
    if request.mimetype == "multipart/form-data":
        files = {}
        for name, upload in request.files.items(multi=False):
            files[name] = upload.stream.read()
            upload.stream.seek(0)
        fingerprint = idempotency.request_fingerprint(request.method, request.path, b"",
                                                      form=request.form.to_dict(flat=False), files=files)
    else:
        fingerprint = idempotency.request_fingerprint(request.method, request.path, request.get_data())
    outcome = idempotency.begin(g.actor.account_id, key, request.method, request.path, fingerprint,
                                current_app.config["IDEMPOTENCY_TTL_HOURS"])
    if isinstance(outcome, idempotency.Replay):
        response = Response(outcome.body, status=outcome.status, mimetype="application/json")
        response.headers["Idempotent-Replay"] = "true"
        try:
            g.api_reference = json.loads(outcome.body).get("api_reference", g.api_reference)
        except ValueError:
            pass
        return response
    g.idempotency_record = outcome
    return None


@bp.after_request
def store_idempotent_response(response: Response) -> Response:
    record_id = g.pop("idempotency_record", None)
    if record_id is not None:
        idempotency.finish(record_id, response.status_code, response.get_data(as_text=True))
    return response


@bp.teardown_request
def release_idempotency_key(exc: BaseException | None) -> None:
    record_id = g.pop("idempotency_record", None)
    if record_id is not None:  # the request died before a response was stored
        idempotency.release(record_id)


# ------------------------------------------------------------------ bodies and envelopes

JSON_TYPES = ("application/json",)


def json_body() -> Any:
    """The request's JSON body. 415 unless it is sent as application/json (or a +json type); 400 for invalid
    JSON, nesting deeper than inputs.MAX_DEPTH, or control characters (app/core/inputs.py)."""
    mimetype = request.mimetype or ""
    if mimetype not in JSON_TYPES and not mimetype.endswith("+json"):
        sent = f"“{request.content_type}”" if request.content_type else "no Content-Type"
        raise UnsupportedMediaType(f"This endpoint takes a JSON body: send it with 'Content-Type: "
                                   f"application/json' ({sent} was sent).")
    return parse_json(request.get_data(cache=True)) if request.content_length != 0 else {}


def json_object() -> dict:
    """The body as a JSON object; services validate it with the domain's request schema."""
    data = json_body()
    if not isinstance(data, dict):
        raise Invalid("The request body must be a JSON object.", errors={"body": ["Must be a JSON object."]})
    return data


def _dump(schema: type[BaseModel], obj: Any) -> dict:
    return schema.model_validate(obj).model_dump(mode="json")


def single(schema: type[BaseModel], obj: Any, status: int = 200, extra: dict | None = None) -> tuple[dict, int]:
    data = _dump(schema, obj)
    if extra:
        data.update(extra)
    return {"data": data, "api_reference": g.api_reference}, status


_list_adapters: dict[type, TypeAdapter] = {}


def listing(schema: type[BaseModel], page: Page) -> tuple[dict, int]:
    adapter = _list_adapters.get(schema)
    if adapter is None:
        adapter = _list_adapters[schema] = TypeAdapter(list[schema])
    data = adapter.dump_python(adapter.validate_python(page.items, from_attributes=True), mode="json")
    return {"data": data, "meta": page.meta(), "api_reference": g.api_reference}, 200


# ------------------------------------------------------------------ OpenAPI registry

def endpoint(*, summary: str, tag: str, response: type[BaseModel] | None = None, body: type[BaseModel] | None = None,
             status: int = 200, is_list: bool = False, errors: Iterable[int] = (),
             query: dict[str, str] | None = None, description: str | None = None,
             content: dict[str, dict] | None = None, produces: dict[str, dict] | None = None,
             accepted: bool = False) -> Callable:
    """Describe a route for the OpenAPI document. `body` is the schema the service validates with;
    the route receives the JSON object as `body`. `content` describes non-JSON bodies (media type -> JSON
    Schema), e.g. file uploads. `accepted`: large requests answer 202 with the job that does the work
    (`HeavyJobOut`, a `Location` header naming its status resource: `accepted_job`)."""

    def decorate(fn: Callable) -> Callable:
        @wraps(fn)
        def wrapper(*args, **kwargs):
            if body is not None:
                kwargs["body"] = json_object()
            return fn(*args, **kwargs)

        wrapper.openapi = {"summary": summary, "tag": tag, "response": response, "body": body, "status": status,
                           "is_list": is_list, "errors": sorted(set(errors) | {400, 401, 429} | (
                               {413, 415} if body is not None or content else set())), "query": query or {},
                           "description": description, "content": content, "produces": produces,
                           "accepted": accepted}
        return wrapper

    return decorate


def error_body(message: str, errors: dict | None = None) -> dict:
    """The one error body of the API: message, field errors (400 only) and the request's api_reference."""
    body: dict[str, Any] = {"message": message}
    if errors:
        body["errors"] = errors
    body["api_reference"] = g.get("api_reference")
    return body


def domain_error_response(exc: DomainError) -> Response:
    from flask import jsonify
    response = jsonify(error_body(exc.message, exc.errors if exc.status == 400 else None))
    response.status_code = exc.status
    response.headers.update(exc.headers)
    return response


@bp.errorhandler(DomainError)
def domain_error(exc: DomainError):
    rollback()
    return domain_error_response(exc)


def accepted_job(job) -> tuple[dict, int, dict]:
    """202 for work a heavy job does: the job's status resource, named by `Location` (docs/heavy-jobs.md)."""
    from flask import url_for

    from app.heavy.schemas import HeavyJobOut
    body, status = single(HeavyJobOut, job_out(job), 202)
    return body, status, {"Location": url_for("api.show_job", job_uuid=job.uuid)}


def job_out(job) -> dict:
    """A heavy job as the API shows it (its file's link once complete)."""
    from flask import url_for
    return {"uuid": job.uuid, "kind": job.kind, "status": job.status, "progress": job.progress,
            "message": job.message, "target_uuid": job.target_uuid, "errors": job.errors, "result": job.result,
            "result_url": url_for("api.job_result", job_uuid=job.uuid) if job.has_file else None,
            "attempts": job.attempts, "created_at": job.created_at, "started_at": job.started_at,
            "finished_at": job.finished_at, "expires_at": job.expires_at}
