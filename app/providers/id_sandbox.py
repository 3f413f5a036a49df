"""The sandbox answer of every ID type: deterministic, no network. Magic last names (any case, docs/sandbox.md):

- `sandbox-n`: the issuer says the details do not match (DVS `N`; NZ `NoMatch`; payroll and super `N`);
- `sandbox-d`: the issuer has no such document (DVS `D`; NZ `NoMatch` with "not found"; payroll and super `N`);
- `sandbox-fail`: the upstream fails (no ID check recorded, nothing charged);
- `sandbox-timeout`: the upstream times out (the same);
- anything else: the details match (DVS `Y`, NZ `Match`, payroll and super `Y`).

The answer's references derive from the request's reference, so the same request answers the same way."""
from __future__ import annotations

import hashlib
from typing import Any

from app.providers.base import ProviderError
from app.providers.id_base import DIA, DVS, NZTA, PAYROLL, IdRequest, IdVerification

MAGIC = {"sandbox-n": "N", "sandbox-d": "D"}
SUMMARIES = {"Y": "The issuer's record matches the details.",
             "N": "The issuer's record does not match the details.",
             "D": "The issuer has no record of this document."}


def _ref(request: IdRequest, kind: str, digits: int = 10) -> str:
    return str(int(hashlib.sha256(f"{kind}:{request.reference}".encode()).hexdigest(), 16))[:digits]


class SandboxIdProvider:
    name = "sandbox"

    def __init__(self, entry):
        """`entry`: the ID type's registry entry (`providers.id_types.IdType`)."""
        self.id_type = entry.name
        self.entry = entry

    def verify(self, data: dict[str, Any], request: IdRequest) -> IdVerification:
        word = str(data.get("last_name") or "").strip().lower()
        if word == "sandbox-fail":
            raise ProviderError(f"sandbox: the {self.entry.check_type_name} failed (forced by the last name)")
        if word == "sandbox-timeout":
            raise ProviderError(f"sandbox: the {self.entry.check_type_name} timed out (forced by the last name)",
                                retryable=True)
        code = MAGIC.get(word, "Y")
        details = self._details(code, data, request)
        return IdVerification(outcome="pass" if code == "Y" else "fail", details=details,
                              outcome_summary=SUMMARIES[code], provider=self.name)

    def _details(self, code: str, data: dict[str, Any], request: IdRequest) -> dict[str, Any]:
        check_type = self.entry.check_type
        if check_type == DVS:
            agency = self.entry.agency
            if agency in ("state", "BDM"):
                agency = f"{agency if agency != 'state' else 'RA'}-{data.get('state') or data.get('registration_state')}"
            return {"verification_result_code": code, "originating_agency_code": agency,
                    "verification_request_number": f"SBX{_ref(request, 'dvs')}",
                    "additional_information": [] if code == "Y" else [SUMMARIES[code]]}
        if check_type in (NZTA, DIA):
            return {"api_reference": f"sbx-{_ref(request, 'nz', 12)}", "reporting_reference": _ref(request, "rep", 8),
                    "match_status": "Match" if code == "Y" else "NoMatch", "document_verified": code == "Y",
                    "additional_information": None if code == "Y" else SUMMARIES[code]}
        if check_type == PAYROLL:
            found = "Y" if code == "Y" else "N"
            return {"api_reference": f"sbx-{_ref(request, 'pay', 12)}",
                    "payroll_person": found if data.get("employer_abn") else None,
                    "super_person": found if data.get("super_fund_usi") else None}
        raise ValueError(check_type)
