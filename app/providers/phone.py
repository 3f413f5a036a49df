"""phone_check, real everywhere (sandbox included): the `phonenumbers` library (Google's libphonenumber metadata)
tells whether a number is valid, its type, its region and its original carrier, offline.

An invalid number fails the check's one row; a premium-rate, VoIP, shared-cost, personal, pager, UAN or
unknown-type number is a warning (numbers that fraud favours or that do not identify a subscriber line); a
number registered in another country than the subject's address country is a warning."""
from __future__ import annotations

from typing import Any

import phonenumbers
from phonenumbers import PhoneNumberType, carrier, geocoder, timezone

from app.providers.base import ProviderError, ProviderResult, ResultRow, RunContext, Subject, fingerprint, stable_id

TYPE_NAMES = {
    PhoneNumberType.FIXED_LINE: "fixed_line", PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "fixed_line_or_mobile", PhoneNumberType.TOLL_FREE: "toll_free",
    PhoneNumberType.PREMIUM_RATE: "premium_rate", PhoneNumberType.SHARED_COST: "shared_cost",
    PhoneNumberType.VOIP: "voip", PhoneNumberType.PERSONAL_NUMBER: "personal_number",
    PhoneNumberType.PAGER: "pager", PhoneNumberType.UAN: "uan", PhoneNumberType.VOICEMAIL: "voicemail",
    PhoneNumberType.UNKNOWN: "unknown",
}
RISKY_TYPES = {"premium_rate", "voip", "shared_cost", "personal_number", "pager", "uan", "voicemail", "unknown"}


class PhoneProvider:
    check_type = "phone_check"
    name = "phonenumbers"

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        raw = (subject.phone or "").strip()
        if not raw:
            raise ProviderError("no phone number to check")
        region = (subject.address_country or "").upper() or None
        details: dict[str, Any] = {"input": raw, "valid": False, "possible": False, "e164": None,
                                   "international": None, "national": None, "type": None, "region": None,
                                   "location": None, "carrier": None, "timezones": [], "findings": []}
        rows: list[ResultRow] = []
        try:
            number = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException as exc:
            reason = _PARSE_REASONS.get(exc.error_type, "it is not a phone number")
            details["findings"].append({"code": "invalid", "message": f"Not a valid phone number: {reason}."})
            rows.append(ResultRow("Invalid phone number", "fail", [stable_id("phone", raw, "invalid")],
                                  fingerprint("phone", raw, "invalid")))
            return _result(rows, details, f"{raw} is not a valid phone number.")
        details["possible"] = phonenumbers.is_possible_number(number)
        details["valid"] = valid = phonenumbers.is_valid_number(number)
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        details["e164"] = e164
        details["international"] = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        details["national"] = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
        if not valid:
            details["findings"].append({"code": "invalid", "message": "The number is not assigned in its "
                                        "country's numbering plan."})
            rows.append(ResultRow("Invalid phone number", "fail", [stable_id("phone", e164, "invalid")],
                                  fingerprint("phone", e164, "invalid")))
            return _result(rows, details, f"{details['international']} is not a valid phone number.")
        kind = TYPE_NAMES.get(phonenumbers.number_type(number), "unknown")
        number_region = phonenumbers.region_code_for_number(number)
        details.update(type=kind, region=number_region,
                       location=geocoder.description_for_number(number, "en") or None,
                       carrier=carrier.name_for_number(number, "en") or None,
                       timezones=[z for z in timezone.time_zones_for_number(number) if z != "Etc/Unknown"])
        if kind in RISKY_TYPES:
            label = kind.replace("_", " ")
            details["findings"].append({"code": f"type_{kind}", "message": f"The number is a {label} number."})
            rows.append(ResultRow(f"Phone number type: {label}", "warning", [stable_id("phone", e164, kind)],
                                  fingerprint("phone", e164, kind)))
        if region and number_region and region != number_region:
            details["findings"].append({"code": "region_mismatch", "message": f"The number is registered in "
                                        f"{number_region}; the subject's address is in {region}."})
            rows.append(ResultRow(f"Phone number region {number_region}, address {region}", "warning",
                                  [stable_id("phone", e164, "region", region)],
                                  fingerprint("phone", e164, number_region, region)))
        if not rows:
            rows.append(ResultRow(f"Valid {kind.replace('_', ' ')} number ({number_region})", "pass"))
        summary = f"{details['international']}: valid {kind.replace('_', ' ')} number, {number_region}"
        if details["carrier"]:
            summary += f", {details['carrier']}"
        return _result(rows, details, summary + ".")


_PARSE_REASONS = {
    phonenumbers.NumberParseException.INVALID_COUNTRY_CODE:
        "no valid country code (write it as +61…, or give the subject's address country)",
    phonenumbers.NumberParseException.NOT_A_NUMBER: "it is not a phone number",
    phonenumbers.NumberParseException.TOO_SHORT_AFTER_IDD: "too short",
    phonenumbers.NumberParseException.TOO_SHORT_NSN: "too short",
    phonenumbers.NumberParseException.TOO_LONG: "too long",
}


def _result(rows: list[ResultRow], details: dict[str, Any], summary: str) -> ProviderResult:
    return ProviderResult(results_overview=rows, details=details, check_summary=summary,
                          data_summary=details["input"], provider="phonenumbers")
