"""OpenAPI 3.1 document generated from the routes' `endpoint` metadata and their pydantic schemas."""
from __future__ import annotations

import re
from typing import Any

from flask import current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from app.api.base import bp

_STATUS_TEXT = {400: "Invalid request (field-level `errors`)", 401: "Missing, unknown or revoked API key",
                402: "Insufficient credit", 403: "Not permitted", 404: "Not found (or another account's record)",
                409: "Conflict with the record's state, or Idempotency-Key in flight",
                422: "Idempotency-Key reused with a different body", 429: "Rate limited"}


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
    ordered = sorted(models, key=lambda m: m.__name__)
    _, top = models_json_schema([(m, "validation" if m in {r[2]["body"] for r in routes} else "serialization")
                                 for m in ordered], ref_template="#/components/schemas/{model}")
    schemas = top.get("$defs", {})
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
            parameters.append({"name": name, "in": "query", "required": False, "description": text,
                               "schema": {"type": "string"}})
        if meta["is_list"]:
            parameters += [
                {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}},
                {"name": "per_page", "in": "query",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 30}}]
        if method == "post":
            parameters.append({"name": "Idempotency-Key", "in": "header", "required": False,
                               "schema": {"type": "string", "maxLength": 255},
                               "description": "Retry-safe POST: same key and body replays the first response."})
        if parameters:
            op["parameters"] = parameters
        if meta["body"] is not None:
            op["requestBody"] = {"required": True, "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{meta['body'].__name__}"}}}}
        elif meta.get("content"):
            op["requestBody"] = {"required": True, "content": {
                media: {"schema": schema} for media, schema in meta["content"].items()}}
        ok: dict[str, Any] = {"type": "object", "required": ["data", "api_reference"], "properties": {
            "api_reference": {"type": "string", "format": "uuid"}}}
        if meta["response"] is not None:
            ref = {"$ref": f"#/components/schemas/{meta['response'].__name__}"}
            ok["properties"]["data"] = {"type": "array", "items": ref} if meta["is_list"] else ref
            if meta["is_list"]:
                ok["properties"]["meta"] = {"$ref": "#/components/schemas/ListMeta"}
        success = ({media: {"schema": schema} for media, schema in meta["produces"].items()}
                   if meta.get("produces") else {"application/json": {"schema": ok}})
        responses = {str(meta["status"]): {"description": "Success", "content": success}}
        for code in meta["errors"]:
            responses[str(code)] = {"description": _STATUS_TEXT.get(code, "Error"), "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
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
        "components": {"schemas": schemas,
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


@bp.get("/openapi.json")
def openapi_document():
    return jsonify(build_document())
