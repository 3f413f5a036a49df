"""Who or what is checked: one `Subject` for the checks, the providers and the screening engine.

Plain data, free of Flask and of the database, so that the screening engine (a library) and every provider can
take it. Each field says how people read it (`label`) and, for the fields an adhoc launch accepts, how long it
may be and which values it takes: the adhoc launch schema (`checks.schemas.AdhocSubject`) and the portal's adhoc
form are built from these fields, and the check page, the PDF and the e-mail label a subject's keys with them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


def _key(label: str, *, max_length: int | None = None, min_length: int = 1, choices: tuple = (),
         description: str | None = None, input_hint: str | None = None, adhoc: bool = True) -> Any:
    """A subject key: None by default, with how it is labelled and, for adhoc launches, validated."""
    return field(default=None, metadata={"label": label, "max_length": max_length, "min_length": min_length,
                                         "choices": choices, "description": description,
                                         "input_hint": input_hint, "adhoc": adhoc})


COUNTRY = "ISO 3166-1 alpha-2"


@dataclass(frozen=True)
class Subject:
    """The union of the subject keys of every check type (all optional here; each check type's required keys
    are enforced by the checks service before launch, from the check-type registry)."""

    first_name: str | None = _key("First name", max_length=255)
    middle_name: str | None = _key("Middle name", max_length=255)
    last_name: str | None = _key("Last name", max_length=255)
    full_name: str | None = _key("Full name", max_length=255)
    dob: str | None = _key("Date of birth", max_length=10, description="YYYY-MM-DD, YYYY-MM or YYYY")
    gender: str | None = _key("Gender", choices=(("male", "Male"), ("female", "Female"), ("other", "Other")))
    nationality: str | None = _key("Nationality", max_length=2, min_length=2, description=COUNTRY,
                                   input_hint="ISO code")
    business_name: str | None = _key("Business name", max_length=255)
    vessel_name: str | None = _key("Vessel name", max_length=255)
    business_number: str | None = _key("Business number", max_length=32)  # ABN / ACN (AU) or company number (UK)
    business_number_type: str | None = _key("Business number type", choices=(
        ("au_abn", "ABN"), ("au_acn", "ACN"), ("uk_crn", "UK company number"), ("other", "Other")))
    phone: str | None = _key("Phone", max_length=32)
    email: str | None = _key("E-mail", max_length=320)
    address: str | None = _key("Address", max_length=500)
    address_state: str | None = _key("State", max_length=64)
    address_country: str | None = _key("Country", max_length=2, min_length=2, description=COUNTRY,
                                       input_hint="ISO code")
    # The screening engine's own keys (its command line and benchmarks); not taken by check launches.
    place_of_birth: str | None = _key("Place of birth", adhoc=False)
    schema: str | None = _key("Kind", adhoc=False)  # "Person", "Organization", "Company", "Vessel"; inferred

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Subject":
        """Known keys only, stripped, blank as None; `date_of_birth` is read as `dob`."""
        known = set(cls.__dataclass_fields__)
        values = {k: (str(v).strip() or None) if v is not None else None for k, v in data.items() if k in known}
        if data.get("date_of_birth") and not values.get("dob"):
            values["dob"] = str(data["date_of_birth"]).strip() or None
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def person_name(self) -> str:
        parts = [p for p in (self.first_name, self.middle_name, self.last_name) if p]
        return " ".join(parts) or (self.full_name or "")

    @property
    def display_name(self) -> str:
        return self.person_name or self.business_name or self.vessel_name or self.email or self.phone or ""


SUBJECT_KEYS = tuple(f.name for f in fields(Subject))
ADHOC_KEYS = tuple(f.name for f in fields(Subject) if f.metadata["adhoc"])
SUBJECT_LABELS = {f.name: f.metadata["label"] for f in fields(Subject)}
SUBJECT_VALUE_LABELS = {f.name: dict(f.metadata["choices"]) for f in fields(Subject) if f.metadata["choices"]}


def subject_key(name: str) -> dict[str, Any]:
    """How a subject key is labelled and validated (the field's metadata)."""
    return dict(Subject.__dataclass_fields__[name].metadata)


def subject_key_label(name: str) -> str:
    return SUBJECT_LABELS.get(name) or name.replace("_", " ").capitalize()
