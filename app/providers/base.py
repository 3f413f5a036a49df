"""What every provider speaks: a subject and a resolved config in, an outcome with typed details out.

A provider answers one operation (`check_type`). It never touches the database or Flask: the checks service
hands it plain values and stores what it returns. An upstream that fails, times out or answers something we
cannot read raises `ProviderError`: the check ends `failed` and its credit is refunded; it never escapes as a
500. Alerts are the `warning` / `fail` rows of `results_overview`; each row carries stable `alert_ids`
(provider-side result identifiers) and a `fingerprint` of the facts that decide it, so that a re-screen can
tell a new or changed alert from one already reviewed.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

OPERATIONS = ("pep_sanction_check", "adverse_media", "phone_check", "email_check", "adc_check",
              "adc_custodian_check", "banned_disqualified_persons", "court_check", "business_check",
              "uk_business_check", "realestate_check")

# Sandbox magic inputs (docs/sandbox.md): a subject whose last_name or business_name is one of these (any case).
MAGIC_FAIL = "sandbox-fail"
MAGIC_HIT = "sandbox-hit"


class ProviderError(Exception):
    """The upstream failed, timed out or answered something unreadable: fail the check, refund it."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


class ProviderNotConfigured(ProviderError):
    """A live account asked for an operation whose real upstream has no credentials here."""


@dataclass(frozen=True)
class Subject:
    """Who or what is checked: the union of the subject keys of every operation (all optional here; each
    operation's required keys are enforced by the checks service before launch)."""

    first_name: str | None = None
    middle_name: str | None = None
    last_name: str | None = None
    full_name: str | None = None
    dob: str | None = None
    gender: str | None = None
    nationality: str | None = None
    business_name: str | None = None
    vessel_name: str | None = None
    business_number: str | None = None       # ABN / ACN (AU) or company number (UK)
    business_number_type: str | None = None
    phone: str | None = None
    email: str | None = None
    address: str | None = None
    address_state: str | None = None
    address_country: str | None = None       # ISO 3166-1 alpha-2

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Subject":
        known = set(cls.__dataclass_fields__)
        return cls(**{k: (str(v).strip() or None) if v is not None else None
                      for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def person_name(self) -> str:
        parts = [p for p in (self.first_name, self.middle_name, self.last_name) if p]
        return " ".join(parts) or (self.full_name or "")

    @property
    def display_name(self) -> str:
        return self.person_name or self.business_name or self.vessel_name or self.email or self.phone or ""

    def magic(self) -> str | None:
        """The sandbox magic word this subject carries, if any."""
        for value in (self.last_name, self.business_name):
            word = (value or "").strip().lower()
            if word in (MAGIC_FAIL, MAGIC_HIT):
                return word
        return None


@dataclass
class ResultRow:
    """One row of `results_overview`: a finding (or a pass) with the ids of the provider results behind it."""

    title: str
    status: str                                 # pass | warning | fail
    alert_ids: list[str] = field(default_factory=list)
    fingerprint: str | None = None               # hash of the deciding facts (alerts only)

    def __post_init__(self) -> None:
        if self.status not in ("pass", "warning", "fail"):
            raise ValueError(f"bad result status {self.status!r}")
        if self.status == "pass":
            self.alert_ids = []

    @property
    def is_alert(self) -> bool:
        return self.status in ("warning", "fail")


@dataclass
class ProviderResult:
    results_overview: list[ResultRow]
    details: dict[str, Any]
    check_summary: str
    data_summary: str | None = None
    provider: str = ""                           # which implementation answered ("sandbox", "abr", ...)

    @property
    def outcome(self) -> str:
        """`warning` when any row alerts, else `pass` (the spec's two outcomes)."""
        return "warning" if any(r.is_alert for r in self.results_overview) else "pass"

    @property
    def alerts(self) -> list[ResultRow]:
        return [r for r in self.results_overview if r.is_alert]


@dataclass(frozen=True)
class RunContext:
    """What a provider may know about the run: the account's mode and the settings it needs."""

    sandbox: bool = True
    settings: dict[str, Any] = field(default_factory=dict)
    index: Any = None                            # the screening index, for the local screening operations
    demo: bool = False                           # the demo account: the only one that sees demo lists


@runtime_checkable
class Provider(Protocol):
    check_type: str
    name: str

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        ...


def fingerprint(*facts: Any) -> str:
    """A stable hash of the facts that decide an alert (names, dates, identifiers, programmes, positions)."""
    raw = json.dumps(facts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def stable_id(*parts: Any) -> str:
    """A provider-side result id that is the same for the same finding on every run: a decimal string of a
    48-bit integer, so that it reads the same as the integer `check_result_ids` of events (and stays a safe
    integer in JavaScript)."""
    return str(int(fingerprint(*parts)[:12], 16))
