"""The "Run checks" form, generated from the check-type registry and its config schemas (one source with the
API): each check type's config fields with their allowed values, labels and the spec's defaults, the adhoc
subject's fields (from `core.subject.Subject`), and the posted form turned back into the launch body
(`check_types`, `config.<check_type>.<key>`), so that the service's field errors name the form's inputs."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any

from werkzeug.datastructures import MultiDict

from app.core.schemas import literal_values
from app.core.subject import ADHOC_KEYS, subject_key
from app.providers.registry import CHECK_TYPES
from app.providers.vocabulary import option_label, value_label

# The adhoc form's subject fields: (key, label) in the Subject's order, and the choices of the keys that have some.
ADHOC_FIELDS = [(k, subject_key(k)["label"] + (f" ({subject_key(k)['input_hint']})" if subject_key(k)["input_hint"]
                                               else "")) for k in ADHOC_KEYS]
ADHOC_CHOICES = {k: [("", "—"), *subject_key(k)["choices"]] for k in ADHOC_KEYS if subject_key(k)["choices"]}


@dataclass
class ConfigField:
    name: str            # the input's name: config.<check_type>.<key>
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
class CheckTypeChoice:
    check_type: str
    name: str
    price: int
    hint: str
    fields: list[ConfigField]


def config_fields(check_type: str) -> list[ConfigField]:
    schema = CHECK_TYPES[check_type].config
    if schema is None:
        return []
    out = []
    defaults = schema().model_dump(mode="json")
    for key, info in schema.model_fields.items():
        annotation = info.annotation
        name = f"config.{check_type}.{key}"
        label = option_label(key, with_unit=True)
        default = defaults[key]
        origin = typing.get_origin(annotation)
        if annotation is bool:
            out.append(ConfigField(name, key, label, "checkbox", default))
        elif origin is list:
            values = literal_values(typing.get_args(annotation)[0]) if typing.get_args(annotation) else None
            if values:
                out.append(ConfigField(name, key, label, "multi", default,
                                       [(str(v), value_label(v)) for v in values],
                                       info.description))
            else:
                out.append(ConfigField(name, key, label, "countries", ", ".join(default), description=(
                    (info.description + " " if info.description else "") + "ISO codes, comma-separated.")))
        elif literal_values(annotation):
            values = literal_values(annotation)
            out.append(ConfigField(name, key, label, "select", str(default),
                                   [(str(v), value_label(v, key)) for v in values]))
        else:
            out.append(ConfigField(name, key, label, "date", default or "", description=info.description))
    return out


def check_type_choices(enabled: list[str], prices: dict[str, int]) -> list[CheckTypeChoice]:
    """The check types the account is entitled to, in the registry's order, with their price and config fields."""
    return [CheckTypeChoice(e.name, e.label, prices.get(e.name, 0), e.needs_text, config_fields(e.name))
            for e in CHECK_TYPES.entries() if e.name in enabled]


def launch_body(form: MultiDict, *, with_data: bool = False) -> dict[str, Any]:
    """The posted form as the API's launch body: only the chosen check types' config, with the values typed as
    the API takes them (a list for multi-choice and country fields, a bool for switches, an int for max
    results)."""
    check_types = [check_type for check_type in form.getlist("check_types") if check_type]
    config: dict[str, dict] = {}
    for check_type in check_types:
        section: dict[str, Any] = {}
        for f in config_fields(check_type):
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
            config[check_type] = section
    body: dict[str, Any] = {"check_types": check_types}
    if config:
        body["config"] = config
    if with_data:
        body["data"] = {k[len("data."):]: v.strip() for k, v in form.items()
                        if k.startswith("data.") and v and v.strip()}
    return body
