"""The "Run checks" form, generated from the launch schemas (one source with the API): each operation's config
fields with their allowed values and the spec's defaults, and the posted form turned back into the launch body
(`check_types`, `config.<operation>.<key>`), so that the service's field errors name the form's inputs."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from werkzeug.datastructures import MultiDict

from app.accounts.models import CHECK_TYPES
from app.checks.schemas import CONFIG_SCHEMAS, SUBJECT_REQUIREMENTS

LABELS = {"search_type": "Search type", "similarity_threshold": "Similarity threshold (%)",
          "pep_countries": "PEP countries", "sanction_countries": "Sanctions countries",
          "max_results": "Max results", "pep_sanction_extended_result": "Extended result (all record details)",
          "banned_types": "Registers", "listing": "Listing", "search_party": "Party", "name_match": "Name match",
          "abn_active": "ABN active", "acn_active": "ACN active", "gst_registered": "GST registered",
          "recent_documents": "Recent documents (months)", "recent_business_names": "Recent business names (months)",
          "company_status": "Company status", "recent_filings": "Recent filings (months)",
          "officer_changes": "Officer changes (months)", "registered_address_change": "Registered address change",
          "sic_codes_change": "SIC codes change", "date_from": "Listings from"}
CHOICE_LABELS = {"broad_search": "Broad", "medium_search": "Medium", "narrow_search": "Narrow", "yes": "Yes",
                 "no": "No", "on_change": "On change", "exact": "Exact", "similar": "Similar", "all": "All",
                 "civil": "Civil", "criminal": "Criminal", "any": "Any", "plaintiff": "Plaintiff",
                 "defendant": "Defendant"}
OPERATION_HINTS = {op: "Needs " + " and ".join(" or ".join(k.replace("_", " ") for k in group) for group in groups)
                   for op, groups in SUBJECT_REQUIREMENTS.items()}


@dataclass
class ConfigField:
    name: str            # the input's name: config.<operation>.<key>
    key: str
    label: str
    kind: str            # select | multi | countries | checkbox | date
    default: Any
    choices: list[tuple[str, str]] = field(default_factory=list)
    description: str | None = None

    @property
    def id(self) -> str:
        return self.name.replace(".", "-")


@dataclass
class Operation:
    check_type: str
    name: str
    price: int
    hint: str
    fields: list[ConfigField]


def _literal_values(annotation) -> list | None:
    for candidate in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(candidate) is Literal:
            return list(typing.get_args(candidate))
        if typing.get_origin(candidate) is typing.Annotated:
            found = _literal_values(typing.get_args(candidate)[0])
            if found:
                return found
    return None


def config_fields(check_type: str) -> list[ConfigField]:
    schema = CONFIG_SCHEMAS.get(check_type)
    if schema is None:
        return []
    out = []
    defaults = schema().model_dump(mode="json")
    for key, info in schema.model_fields.items():
        annotation = info.annotation
        name = f"config.{check_type}.{key}"
        label = LABELS.get(key, key.replace("_", " ").capitalize())
        default = defaults[key]
        origin = typing.get_origin(annotation)
        if annotation is bool:
            out.append(ConfigField(name, key, label, "checkbox", default))
        elif origin is list:
            values = _literal_values(typing.get_args(annotation)[0]) if typing.get_args(annotation) else None
            if values:
                out.append(ConfigField(name, key, label, "multi", default,
                                       [(str(v), str(v).replace("_", " ").capitalize()) for v in values],
                                       info.description))
            else:
                out.append(ConfigField(name, key, label, "countries", ", ".join(default), description=(
                    (info.description + " " if info.description else "") + "ISO codes, comma-separated.")))
        elif _literal_values(annotation):
            values = _literal_values(annotation)
            out.append(ConfigField(name, key, label, "select", str(default),
                                   [(str(v), CHOICE_LABELS.get(str(v), str(v))) for v in values]))
        else:
            out.append(ConfigField(name, key, label, "date", default or "", description=info.description))
    return out


def operations(enabled: list[str], prices: dict[str, int]) -> list[Operation]:
    """The operations the account is entitled to, in the spec's order, with their price and config fields."""
    return [Operation(op, name, prices.get(op, 0), OPERATION_HINTS[op], config_fields(op))
            for op, name in CHECK_TYPES.items() if op in enabled]


def launch_body(form: MultiDict, *, with_data: bool = False) -> dict[str, Any]:
    """The posted form as the API's launch body: only the chosen operations' config, with the values typed as
    the API takes them (a list for multi-choice and country fields, a bool for switches, an int for max
    results)."""
    check_types = [op for op in form.getlist("check_types") if op]
    config: dict[str, dict] = {}
    for op in check_types:
        section: dict[str, Any] = {}
        for f in config_fields(op):
            if f.kind == "checkbox":
                section[f.key] = form.get(f.name) in ("on", "true", "1", "y")
            elif f.kind == "multi":
                section[f.key] = form.getlist(f.name)
            elif f.kind == "countries":
                raw = form.get(f.name, "")
                section[f.key] = [c.strip() for c in raw.replace(";", ",").split(",") if c.strip()]
            else:
                value = form.get(f.name)
                if value in (None, ""):
                    if f.kind == "date":
                        section[f.key] = None
                    continue
                section[f.key] = int(value) if f.key == "max_results" and value.isdigit() else value
        if section:
            config[op] = section
    body: dict[str, Any] = {"check_types": check_types}
    if config:
        body["config"] = config
    if with_data:
        body["data"] = {k[len("data."):]: v.strip() for k, v in form.items()
                        if k.startswith("data.") and v and v.strip()}
    return body
