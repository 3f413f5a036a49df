"""email_check, real everywhere (sandbox included): `email-validator` for the syntax and, through `dnspython`,
the domain's deliverability (MX records, or an A/AAAA fallback; a null MX refuses mail), time-limited;
`disposable-email-domains` (the community-maintained blocklist) for throw-away domains.

Rows: invalid syntax or a domain that does not accept mail → `fail`; a disposable domain, or deliverability
that could not be verified in time (DNS timeout or no answer) → `warning`. A DNS timeout is never a failure of
the check: the upstream here is the public DNS, and its silence says nothing about the subject."""
from __future__ import annotations

from typing import Any

import dns.exception
import dns.resolver
from disposable_email_domains import blocklist as DISPOSABLE
from email_validator import EmailNotValidError, EmailSyntaxError, EmailUndeliverableError, validate_email

from app.providers.base import ProviderError, ProviderResult, ResultRow, RunContext, Subject, fingerprint, stable_id

DEFAULT_DNS_TIMEOUT = 3.0


class EmailProvider:
    check_type = "email_check"
    name = "email-validator"

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        raw = (subject.email or "").strip()
        if not raw:
            raise ProviderError("no e-mail address to check")
        details: dict[str, Any] = {"input": raw, "normalized": None, "domain": None, "syntax_valid": False,
                                   "deliverable": None, "mx": [], "disposable": False, "findings": []}
        rows: list[ResultRow] = []
        try:
            syntax = validate_email(raw, check_deliverability=False)
        except EmailSyntaxError as exc:
            details["findings"].append({"code": "invalid_syntax", "message": str(exc)})
            rows.append(ResultRow("Invalid e-mail address", "fail", [stable_id("email", raw, "syntax")],
                                  fingerprint("email", raw, "syntax")))
            return _result(rows, details, f"{raw} is not a valid e-mail address.")
        address, domain = syntax.normalized, syntax.ascii_domain
        details.update(normalized=address, domain=domain, syntax_valid=True)

        resolver = ctx.settings.get("dns_resolver") or _resolver(ctx.settings.get("EMAIL_DNS_TIMEOUT",
                                                                                  DEFAULT_DNS_TIMEOUT))
        try:
            info = validate_email(address, check_deliverability=True, dns_resolver=resolver)
            if getattr(info, "mx", None) is None:  # email-validator's answer when DNS timed out
                details["findings"].append({"code": "deliverability_unknown",
                                            "message": "Deliverability could not be verified (DNS timeout)."})
                rows.append(ResultRow("E-mail deliverability not verified", "warning",
                                      [stable_id("email", address, "unknown")], fingerprint("email", address, "unknown")))
            else:
                details["deliverable"] = True
                details["mx"] = [host for _pref, host in (getattr(info, "mx", None) or [])]
        except EmailUndeliverableError as exc:
            details["deliverable"] = False
            details["findings"].append({"code": "undeliverable", "message": str(exc)})
            rows.append(ResultRow("E-mail domain does not accept mail", "fail",
                                  [stable_id("email", address, "undeliverable")],
                                  fingerprint("email", address, "undeliverable")))
        except (EmailNotValidError, dns.exception.DNSException) as exc:  # resolver trouble: a warning
            details["findings"].append({"code": "deliverability_unknown",
                                        "message": f"Deliverability could not be verified ({exc})."})
            rows.append(ResultRow("E-mail deliverability not verified", "warning",
                                  [stable_id("email", address, "unknown")], fingerprint("email", address, "unknown")))

        if _is_disposable(domain):
            details["disposable"] = True
            details["findings"].append({"code": "disposable", "message": f"{domain} is a disposable e-mail domain."})
            rows.append(ResultRow("Disposable e-mail domain", "warning", [stable_id("email", domain, "disposable")],
                                  fingerprint("email", domain, "disposable")))
        if not rows:
            rows.append(ResultRow("Valid, deliverable e-mail address", "pass"))
        state = ("deliverable" if details["deliverable"] else "not deliverable" if details["deliverable"] is False
                 else "deliverability unknown")
        summary = f"{address}: valid syntax, {state}" + (", disposable domain" if details["disposable"] else "")
        return _result(rows, details, summary + ".")


def _is_disposable(domain: str) -> bool:
    labels = domain.lower().split(".")
    return any(".".join(labels[i:]) in DISPOSABLE for i in range(len(labels) - 1))


def _resolver(timeout: float) -> dns.resolver.Resolver:
    try:
        resolver = dns.resolver.Resolver()
    except dns.resolver.NoResolverConfiguration:
        resolver = dns.resolver.Resolver(configure=False)
        resolver.nameservers = ["127.0.0.1"]
    resolver.lifetime = float(timeout)
    resolver.timeout = float(timeout)
    return resolver


def _result(rows: list[ResultRow], details: dict[str, Any], summary: str) -> ProviderResult:
    return ProviderResult(results_overview=rows, details=details, check_summary=summary,
                          data_summary=details["input"], provider="email-validator")
