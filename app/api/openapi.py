"""OpenAPI 3.1 document generated from the routes' `endpoint` metadata and their pydantic schemas."""
from __future__ import annotations

import re
from typing import Any

from flask import current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from app.api.base import bp
from app.api.examples import API_REFERENCE, ERROR_EXAMPLES, EXAMPLES, MEDIA_EXAMPLES
from app.entities.models import ENTITY_TYPES
from app.entities.schemas import ONE_OF_REQUIRED, REQUIRED_FIELDS, TYPE_FIELDS
from app.heavy.schemas import HeavyJobOut
from app.webhooks.registry import EVENT_TYPES

_STATUS_TEXT = {400: "Invalid request (field-level `errors`)", 401: "Missing, unknown or revoked API key",
                402: "Insufficient credit", 403: "Not permitted", 404: "Not found (or another account's record)",
                409: "Conflict with the record's state, or Idempotency-Key in flight",
                413: "Body (or CSV file) over the size limit", 415: "Body not sent as application/json",
                422: "Idempotency-Key reused with a different body", 429: "Rate limited (see Retry-After)",
                503: "Background processing unavailable: nothing was written or charged (see Retry-After)"}

# Every response carries the request id; every response of a counted request the RateLimit-* fields (absent
# only while the rate-limit store is down); 429 and 503 say when to retry.
HEADERS = {
    "X-Request-Id": {"description": "Equal to the body's api_reference.", "required": True,
                     "schema": {"type": "string", "format": "uuid"}},
    "RateLimit-Limit": {"description": "Requests a minute for this API key (one budget for every endpoint).",
                        "schema": {"type": "integer", "minimum": 1}},
    "RateLimit-Remaining": {"description": "Requests left in the current window, after this one.",
                            "schema": {"type": "integer", "minimum": 0}},
    "RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer",
                                                                                       "minimum": 0}},
    "Retry-After": {"description": "Seconds to wait before retrying.", "required": True,
                    "schema": {"type": "integer", "minimum": 0}},
    "Location": {"description": "The status resource of the job doing the work (`/api/v1/jobs/{job_uuid}`).",
                 "required": True, "schema": {"type": "string"}},
}


def _headers(code: int) -> dict:
    names = ["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]
    if code in (429, 503):
        names.append("Retry-After")
    return {n: {"$ref": f"#/components/headers/{n}"} for n in names}


# Query parameters that take a boolean (true, false, 1, 0: app/core/listing.parse_bool).
BOOLEAN_QUERY = {"archived", "near_misses"}
# Creating operations, and the path parameter their new record's uuid fills (stateful links).
CREATES = {("post", "/api/v1/programs"): "program_uuid",
           ("post", "/api/v1/programs/{program_uuid}/entities"): "entity_uuid",
           ("post", "/api/v1/entities/{entity_uuid}/notes"): "note_uuid",
           ("post", "/api/v1/entities/{entity_uuid}/checks"): "check_uuid",
           ("post", "/api/v1/adhoc-checks"): "adhoc_check_uuid",
           ("post", "/api/v1/webhook-endpoints"): "endpoint_uuid"}

WEBHOOK_HEADERS = [
    ("webhook-id", "The message's id: the same on every attempt and replay (deduplicate on it)."),
    ("webhook-timestamp", "Unix seconds when this attempt was signed (reject old ones: replay protection)."),
    ("webhook-signature", "Space-separated `v1,<base64>` HMAC-SHA256 signatures of `id.timestamp.body` with the "
                          "secret's bytes (after `whsec_`); two during a rotation. Standard Webhooks."),
]


def _webhooks() -> dict[str, Any]:
    """The OpenAPI 3.1 `webhooks` section: one POST per event type, its body {type, timestamp, data}."""
    out: dict[str, Any] = {}
    for kind in EVENT_TYPES.values():
        refs = [{"$ref": f"#/components/schemas/{m.__name__}"} for m in kind.schemas]
        sample = EXAMPLES.get(kind.schemas[0].__name__, {})
        body = {"type": "object", "required": ["type", "timestamp", "data"], "properties": {
            "type": {"type": "string", "const": kind.name},
            "timestamp": {"type": "string", "format": "date-time"},
            "data": refs[0] if len(refs) == 1 else {"oneOf": refs}}}
        out[kind.name] = {"post": {
            "summary": kind.label, "description": kind.description, "tags": ["Webhooks"],
            "operationId": "webhook_" + kind.name.replace(".", "_"),
            "parameters": [{"name": name, "in": "header", "required": True, "description": text,
                            "schema": {"type": "string"}} for name, text in WEBHOOK_HEADERS],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": body, "example": {"type": kind.name, "timestamp": "2025-03-14T09:26:54.000000Z",
                                            "data": sample}}}},
            "responses": {"2XX": {"description": "Received: any 2xx ends the delivery. 410 disables the endpoint; "
                                                 "a timeout (15 s), a network error, 3xx, 429 or 5xx is retried on "
                                                 "the schedule; other 4xx end the delivery as failed."}}}}
    return out


def _entity_variants(schemas: dict) -> None:
    """EntityIn as documented: one schema per entity_type (its own fields and what it requires), chosen by the
    entity_type discriminator. The server validates with the same rules (app/entities/schemas.py)."""
    base = schemas.get("EntityIn")
    if not base or "properties" not in base:
        return
    mapping = {}
    for kind in ENTITY_TYPES:
        others = {f for k, fields in TYPE_FIELDS.items() if k != kind for f in fields}
        props = {k: v for k, v in base["properties"].items() if k not in others}
        props["entity_type"] = {"type": "string", "const": kind}
        variant: dict[str, Any] = {"type": "object", "title": f"EntityIn ({kind})", "additionalProperties": False,
                                   "properties": props, "required": ["entity_type", *REQUIRED_FIELDS[kind]]}
        if kind in ONE_OF_REQUIRED:
            variant["anyOf"] = [{"required": [f]} for f in ONE_OF_REQUIRED[kind]]
        if kind == "business":
            variant["dependentRequired"] = {"business_number": ["business_number_type"],
                                            "business_number_type": ["business_number"]}
        name = f"EntityIn_{kind}"
        schemas[name] = variant
        mapping[kind] = f"#/components/schemas/{name}"
    schemas["EntityIn"] = {"title": "EntityIn", "oneOf": [{"$ref": ref} for ref in mapping.values()],
                           "discriminator": {"propertyName": "entity_type", "mapping": mapping},
                           "description": base.get("description", "")}


def _path(rule: str) -> tuple[str, list[dict]]:
    params = []
    def repl(m: re.Match) -> str:
        conv, name = m.group(1), m.group(2)
        params.append({"name": name, "in": "path", "required": True,
                       "schema": {"type": "string", "format": "uuid"} if conv == "uuid" else {"type": "string"}})
        return "{" + name + "}"
    return re.sub(r"<(?:(\w+):)?(\w+)>", repl, rule), params


def build_document() -> dict[str, Any]:
    routes = []
    models: set[type[BaseModel]] = set()
    for rule in current_app.url_map.iter_rules():
        if not rule.endpoint.startswith("api."):
            continue
        view = current_app.view_functions[rule.endpoint]
        meta = getattr(view, "openapi", None)
        if not meta:
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            routes.append((rule, method.lower(), meta))
        for key in ("body", "response"):
            if meta[key] is not None:
                models.add(meta[key])
        if meta.get("accepted"):
            models.add(HeavyJobOut)
    for kind in EVENT_TYPES.values():
        models.update(kind.schemas)
    ordered = sorted(models, key=lambda m: m.__name__)
    _, top = models_json_schema([(m, "validation" if m in {r[2]["body"] for r in routes} else "serialization")
                                 for m in ordered], ref_template="#/components/schemas/{model}")
    schemas = top.get("$defs", {})
    _entity_variants(schemas)
    schemas["Error"] = {"type": "object", "required": ["message", "api_reference"], "properties": {
        "message": {"type": "string"},
        "errors": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}},
                   "description": "Field errors keyed by the dotted path of the request field (400 only)."},
        "api_reference": {"type": "string", "format": "uuid"}}}
    schemas["ListMeta"] = {"type": "object", "properties": {k: {"type": "integer"} for k in
                                                            ("current_page", "per_page", "total", "last_page")}}
    paths: dict[str, dict] = {}
    for rule, method, meta in routes:
        path, params = _path(rule.rule)
        op: dict[str, Any] = {"summary": meta["summary"], "tags": [meta["tag"]],
                              "operationId": rule.endpoint.split(".", 1)[1] + ("" if method != "head" else "_head")}
        if meta["description"]:
            op["description"] = meta["description"]
        parameters = list(params)
        for name, text in meta["query"].items():
            schema = {"type": "boolean"} if name in BOOLEAN_QUERY else {"type": "string", "minLength": 1}
            parameters.append({"name": name, "in": "query", "required": False, "description": text,
                               "schema": schema})
        if meta["is_list"]:
            parameters += [
                {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}},
                {"name": "per_page", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 30}}]
        if method == "post":
            parameters.append({"name": "Idempotency-Key", "in": "header", "required": False,
                               "schema": {"type": "string", "minLength": 1, "maxLength": 255},
                               "description": "Retry-safe POST: same key and body replays the first response."})
        if parameters:
            op["parameters"] = parameters
        if meta["body"] is not None:
            name = meta["body"].__name__
            media = {"schema": {"$ref": f"#/components/schemas/{name}"}}
            if name in EXAMPLES:
                media["example"] = EXAMPLES[name]
            op["requestBody"] = {"required": True, "content": {"application/json": media}}
        elif meta.get("content"):
            op["requestBody"] = {"required": True, "content": {
                media: {"schema": schema, "example": MEDIA_EXAMPLES[media]}
                for media, schema in meta["content"].items()}}
        ok: dict[str, Any] = {"type": "object", "required": ["data", "api_reference"], "properties": {
            "api_reference": {"type": "string", "format": "uuid"}}}
        if meta["response"] is not None:
            ref = {"$ref": f"#/components/schemas/{meta['response'].__name__}"}
            ok["properties"]["data"] = {"type": "array", "items": ref} if meta["is_list"] else ref
            if meta["is_list"]:
                ok["properties"]["meta"] = {"$ref": "#/components/schemas/ListMeta"}
        example: dict[str, Any] = {}
        if meta["response"] is not None and meta["response"].__name__ in EXAMPLES:
            sample = EXAMPLES[meta["response"].__name__]
            example["data"] = [sample] if meta["is_list"] else sample
            if meta["is_list"]:
                example["meta"] = {"current_page": 1, "per_page": 30, "total": 1, "last_page": 1}
        example["api_reference"] = API_REFERENCE
        success = ({media: {"schema": schema, "example": MEDIA_EXAMPLES[media]}
                    for media, schema in meta["produces"].items()}
                   if meta.get("produces") else {"application/json": {"schema": ok, "example": example}})
        responses = {str(meta["status"]): {"description": "Success", "content": success,
                                           "headers": _headers(meta["status"])}}
        if meta.get("accepted"):
            responses["202"] = {
                "description": "Accepted: a large request is done by a background job. `Location` names the job's "
                               "status resource (`GET /jobs/{job_uuid}`); poll it until `status` is `complete` "
                               "(then download `result_url`) or `failed` (its `message` and `errors`).",
                "headers": {**_headers(202), "Location": {"$ref": "#/components/headers/Location"}},
                "content": {"application/json": {"schema": {
                    "type": "object", "required": ["data", "api_reference"], "properties": {
                        "data": {"$ref": "#/components/schemas/HeavyJobOut"},
                        "api_reference": {"type": "string", "format": "uuid"}}},
                    "example": {"data": EXAMPLES["HeavyJobOut"], "api_reference": API_REFERENCE}}}}
        for code in meta["errors"]:
            error = {**ERROR_EXAMPLES.get(code, {"message": "Error."}), "api_reference": API_REFERENCE}
            responses[str(code)] = {"description": _STATUS_TEXT.get(code, "Error"), "headers": _headers(code),
                                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"},
                                                                     "example": error}}}
        creates = CREATES.get((method, path))
        if creates:
            links = {}
            for other_rule, other_method, _ in routes:
                other_path, other_params = _path(other_rule.rule)
                if other_params and other_params[-1]["name"] == creates:
                    op_id = other_rule.endpoint.split(".", 1)[1]
                    values = {creates: "$response.body#/data/uuid"}
                    for p in other_params[:-1]:  # the parent's uuid comes from the request that created it
                        values[p["name"]] = f"$request.path.{p['name']}"
                    links[f"{op_id}_{other_method}"] = {"operationId": op_id, "parameters": values}
            if links:
                responses[str(meta["status"])]["links"] = links
        op["responses"] = responses
        op["security"] = [{"bearer": []}]
        paths.setdefault(path, {})[method] = op
    return {
        "openapi": "3.1.0",
        "info": {"title": "Screening Service API", "version": "1.0.0",
                 "description": "Compliance screening and identity verification. Authenticate with "
                                "`Authorization: Bearer <api key>`."},
        "servers": [{"url": "/api/v1"}],
        "paths": {p[len("/api/v1"):] or "/": v for p, v in sorted(paths.items())},
        "webhooks": _webhooks(),
        "components": {"schemas": schemas, "headers": HEADERS,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


@bp.get("/openapi.json")
def openapi_document():
    return jsonify(build_document())
