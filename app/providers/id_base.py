"""What every ID-check provider speaks: an ID type's validated data in, a verification with typed details out.

A provider verifies one kind of document with the service that issued it (DVS, NZTA, DIA, a payroll and super
gateway). It never touches the database or Flask: the ID-check service hands it plain values (document numbers in
clear, in memory only) and stores what it returns. An upstream that fails, times out or answers something we cannot
read raises `ProviderError`: the ID check is not recorded and nothing is charged (the request answers `502`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable



# The services that verify ID types (the API's `check_type` of an ID check) and the `details` shape each answers with.
DVS, NZTA, DIA, PAYROLL = "dvs", "nzta_dlv", "dia_passport", "payroll_super"
CHECK_TYPE_LABELS = {DVS: "Document Verification Service (DVS)", NZTA: "NZTA Driver Licence Verification",
                     DIA: "DIA Passport Verification", PAYROLL: "Payroll and Superannuation Verification",
                     "idpass": "IDPass"}
SHAPES = {DVS: "dvs", NZTA: "nz_licence", DIA: "nz_passport", PAYROLL: "payroll_super"}


@dataclass(frozen=True)
class IdRequest:
    """Who asks, under which identity: the DVS identity (OAC) and the name of the organisation shown to issuers,
    our reference for the request (the ID check's uuid), and the settings an adapter needs."""

    reference: str
    oac: str | None = None
    requester_name: str | None = None
    sandbox: bool = True
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class IdVerification:
    """The issuer's answer: `outcome` pass (the details match its record) or fail; `details` in the type's shape
    (spec "Adhoc ID check", shapes 1-6); a one-line `outcome_summary`; the implementation that answered."""

    outcome: str
    details: dict[str, Any]
    outcome_summary: str
    provider: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in ("pass", "fail"):
            raise ValueError(f"bad ID check outcome {self.outcome!r}")


@runtime_checkable
class IdProvider(Protocol):
    id_type: str
    name: str

    def verify(self, data: dict[str, Any], request: IdRequest) -> IdVerification:
        ...
