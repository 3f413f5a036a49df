"""Public API reference at /api/docs, rendered server-side from the OpenAPI document (one source of truth:
the routes' `endpoint` metadata and their pydantic schemas)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


from app.api.openapi import build_document
from app.portal import bp
from app.portal.base import render

MAX_DEPTH = 3
_METHOD_ORDER = {"get": 0, "post": 1, "put": 2, "patch": 3, "delete": 4}


@dataclass
class FieldRow:
    name: str
    type: str
    required: bool
    constraints: list[str]
    description: str | None
    depth: int = 0


@dataclass
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    description: str | None
    tag: str
    path_params: list[dict]
    query_params: list[dict]
    header_params: list[dict]
    body_schema: str | None
    body_fields: list[FieldRow]
    success_status: str
    response_schema: str | None
    response_is_list: bool
    errors: list[tuple[str, str]]


@dataclass
class Tag:
    name: str
    anchor: str
    operations: list[Operation] = field(default_factory=list)


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


class SchemaReader:
    """Turns JSON Schema (as pydantic emits it) into readable rows: dotted names, types, constraints."""

    def __init__(self, schemas: dict[str, Any]):
        self.schemas = schemas

    def resolve(self, schema: dict) -> tuple[dict, bool, str | None]:
        """(the schema behind refs and nullable unions, whether null is allowed, the referenced model name)."""
        nullable = False
        ref_name = None
        while True:
            if "$ref" in schema:
                ref_name = _ref_name(schema["$ref"])
                schema = {**self.schemas.get(ref_name, {}), **{k: v for k, v in schema.items() if k != "$ref"}}
                continue
            variants = schema.get("anyOf")
            if variants:
                non_null = [v for v in variants if v.get("type") != "null"]
                nullable = nullable or len(non_null) < len(variants)
                if len(non_null) == 1:
                    rest = {k: v for k, v in schema.items() if k != "anyOf"}
                    schema = {**non_null[0], **{k: v for k, v in rest.items() if k in ("description", "default")}}
                    continue
                schema = {**schema, "anyOf": non_null}
            return schema, nullable, ref_name

    def type_label(self, schema: dict) -> str:
        resolved, nullable, ref = self.resolve(schema)
        label = self._base_type(resolved, ref)
        return f"{label} or null" if nullable else label

    def _base_type(self, schema: dict, ref: str | None) -> str:
        if "oneOf" in schema or "anyOf" in schema:
            options = schema.get("oneOf") or schema.get("anyOf")
            return " | ".join(self.type_label(o) for o in options)
        kind = schema.get("type")
        if kind == "array":
            return f"array of {self.type_label(schema.get('items', {}))}"
        if kind == "object" or "properties" in schema:
            return ref or "object"
        if kind == "string" and schema.get("format"):
            return f"string ({schema['format']})"
        if isinstance(kind, list):
            return " | ".join(kind)
        return kind or ref or "any"

    def constraints(self, original: dict) -> list[str]:
        schema, _, _ = self.resolve(original)
        out: list[str] = []
        if "enum" in schema:
            out.append("one of: " + ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in schema["enum"]))
        if "const" in schema:
            out.append(f"always {schema['const']}")
        for key, text in (("minLength", "min length {}"), ("maxLength", "max length {}"), ("minimum", "min {}"),
                          ("maximum", "max {}"), ("exclusiveMinimum", "> {}"), ("exclusiveMaximum", "< {}"),
                          ("minItems", "min {} items"), ("maxItems", "max {} items"), ("pattern", "pattern {}")):
            if key in schema:
                out.append(text.format(schema[key]))
        if schema.get("type") == "array":
            items, _, _ = self.resolve(schema.get("items", {}))
            if "enum" in items:
                out.append("items: " + ", ".join(str(v) for v in items["enum"]))
            if "format" in items:
                out.append(f"items: {items['format']}")
        default = original.get("default", schema.get("default"))
        if default is not None and "default" in (original.keys() | schema.keys()):
            out.append(f"default {json.dumps(default)}")
        return out

    def fields(self, schema: dict, prefix: str = "", depth: int = 0) -> list[FieldRow]:
        resolved, _, _ = self.resolve(schema)
        required = set(resolved.get("required", []))
        rows: list[FieldRow] = []
        for name, prop in (resolved.get("properties") or {}).items():
            inner, _, _ = self.resolve(prop)
            description = prop.get("description") or inner.get("description")
            rows.append(FieldRow(name=prefix + name, type=self.type_label(prop), required=name in required,
                                 constraints=self.constraints(prop), description=description, depth=depth))
            if depth < MAX_DEPTH:
                if inner.get("type") == "object" and inner.get("properties"):
                    rows += self.fields(inner, f"{prefix}{name}.", depth + 1)
                elif inner.get("type") == "array":
                    items, _, _ = self.resolve(inner.get("items", {}))
                    if items.get("properties"):
                        rows += self.fields(items, f"{prefix}{name}[].", depth + 1)
        return rows


def _nested_refs(schemas: dict, schema: Any, seen: set[str]) -> set[str]:
    """Names of every schema referenced from `schema`, recursively."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if ref:
            name = _ref_name(ref)
            if name not in seen:
                seen.add(name)
                _nested_refs(schemas, schemas.get(name, {}), seen)
        for value in schema.values():
            _nested_refs(schemas, value, seen)
    elif isinstance(schema, list):
        for value in schema:
            _nested_refs(schemas, value, seen)
    return seen


def _anchor(*parts: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", "-".join(parts).lower()).strip("-")


def _reading_order(op: Operation) -> tuple:
    """Collections first (list, create, bulk), then the item (show, update, delete), then actions on it."""
    if op.response_is_list or op.success_status == "201":
        rank = 0
    elif op.path.endswith("}"):
        rank = 1
    else:
        rank = 2
    return rank, op.path, _METHOD_ORDER.get(op.method, 9)


def reference(doc: dict) -> dict:
    """A view model of the OpenAPI document for the template."""
    schemas = doc.get("components", {}).get("schemas", {})
    reader = SchemaReader(schemas)
    tags: dict[str, Tag] = {}
    body_models: set[str] = set()
    response_models: set[str] = set()
    for path, methods in doc.get("paths", {}).items():
        for method, op in methods.items():
            params = op.get("parameters", [])
            body_ref = (op.get("requestBody", {}).get("content", {}).get("application/json", {})
                        .get("schema", {}).get("$ref"))
            body_name = _ref_name(body_ref) if body_ref else None
            if body_name:
                body_models.add(body_name)
            success_status, success = next(((code, r) for code, r in op.get("responses", {}).items()
                                            if code.startswith("2")), ("200", {}))
            data_schema = (success.get("content", {}).get("application/json", {}).get("schema", {})
                           .get("properties", {}).get("data", {}))
            is_list = data_schema.get("type") == "array"
            ref = (data_schema.get("items", {}) if is_list else data_schema).get("$ref")
            response_name = _ref_name(ref) if ref else None
            if response_name:
                response_models.add(response_name)
            tag_name = (op.get("tags") or ["Other"])[0]
            tag = tags.setdefault(tag_name, Tag(name=tag_name, anchor=_anchor("tag", tag_name)))
            tag.operations.append(Operation(
                method=method, path=path, anchor=_anchor(method, path), summary=op.get("summary", ""),
                description=op.get("description"), tag=tag_name,
                path_params=[p for p in params if p.get("in") == "path"],
                query_params=[{**p, "type": reader.type_label(p.get("schema", {})),
                               "constraints": reader.constraints(p.get("schema", {}))}
                              for p in params if p.get("in") == "query"],
                header_params=[p for p in params if p.get("in") == "header"],
                body_schema=body_name, body_fields=reader.fields({"$ref": body_ref}) if body_ref else [],
                success_status=success_status, response_schema=response_name, response_is_list=is_list,
                errors=[(code, r.get("description", "")) for code, r in op.get("responses", {}).items()
                        if not code.startswith("2")]))
    for tag in tags.values():
        tag.operations.sort(key=_reading_order)
    shown = set(response_models)
    for name in list(response_models):  # objects nested in responses (e.g. created_by variants) get a table too
        shown |= _nested_refs(schemas, schemas.get(name, {}), set())
    models = [{"name": name, "anchor": _anchor("schema", name), "fields": reader.fields({"$ref": f"#/x/{name}"}),
               "description": schemas[name].get("description")}
              for name in sorted(shown) if name in schemas and schemas[name].get("properties")]
    return {"info": doc.get("info", {}), "servers": doc.get("servers", []),
            "tags": sorted(tags.values(), key=lambda t: t.name), "models": models,
            "error_fields": reader.fields(schemas.get("Error", {}))}


@bp.get("/api/docs")
def api_docs():
    return render("docs/page.html", ref=reference(build_document()))
