"""What a form shows for an ID type's data: one input per field of the type's schema, in its order, with its
label, kind (text, date, select), whether it is required, its hint and its choices. The portal's "Check a document"
and the hosted IDPass flow's "confirm your details" read the same schema through this."""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from datetime import date

from app.core.schemas import literal_values
from app.providers.id_types import ID_TYPES

CHOICE_LABELS = {"M": "Male", "F": "Female", "X": "Indeterminate / unspecified", "green": "Green",
                 "blue": "Blue (reciprocal)", "yellow": "Yellow (interim)", "PCC": "Pensioner Concession Card",
                 "HCC": "Health Care Card", "SHC": "Commonwealth Seniors Health Card"}


@dataclass
class DataField:
    name: str
    label: str
    kind: str                      # text | date | select
    required: bool
    hint: str | None = None
    choices: list[tuple[str, str]] = field(default_factory=list)


def _is_date(annotation) -> bool:
    return annotation is date or any(_is_date(a) for a in typing.get_args(annotation) if a is not type(None))


def data_fields(id_type: str) -> list[DataField]:
    """The form's inputs for an ID type, in the schema's order."""
    out = []
    for name, info in ID_TYPES[id_type].data.model_fields.items():
        values = literal_values(info.annotation)
        kind = "select" if values else "date" if _is_date(info.annotation) else "text"
        hint = info.description or next((m.description for m in info.metadata if getattr(m, "description", None)),
                                        None)
        title = info.title or next((m.title for m in info.metadata if getattr(m, "title", None)), None)
        out.append(DataField(name=name, label=title or name.replace("_", " ").capitalize(), kind=kind,
                             required=info.is_required(), hint=hint,
                             choices=[(str(v), CHOICE_LABELS.get(str(v), str(v))) for v in values or ()]))
    return out


