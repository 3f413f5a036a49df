"""email_check, real everywhere (sandbox included): `email-validator` for the syntax and, through `dnspython`,
the domain's deliverability (MX records, or an A/AAAA fallback; a null MX refuses mail), time-limited;
`disposable-email-domains` (the community-maintained blocklist) for throw-away domains.

Rows: invalid syntax or a domain that does not accept mail → `fail`; a disposable domain, or deliverability
that could not be verified (DNS timeout, no answer, or a resolver that cannot reach the DNS) → `warning`. DNS
trouble is never a failure of the check, nor a finding against the subject: the upstream here is the public DNS,
and its silence says nothing about the address. A "does not exist" or "accepts no mail" answer counts only when
the same resolver can also see the root zone: a resolver cut off from the internet (a captive or offline one
answers NXDOMAIN for every name) could not verify anything."""
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
            if getattr(info, "mx", None) is None:  # email-validator's answer when DNS timed out or failed
                details["findings"].append({"code": "deliverability_unknown", "message": "Deliverability could "
                                            "not be verified: the DNS did not answer in time."})
                rows.append(_unverified(address))
            else:
                details["deliverable"] = True
                details["mx"] = [host for _pref, host in (getattr(info, "mx", None) or [])]
        except EmailUndeliverableError as exc:
            if _dns_answered(exc) and _sees_the_root(resolver):
                details["deliverable"] = False
                details["findings"].append({"code": "undeliverable", "message": str(exc)})
                rows.append(ResultRow("E-mail domain does not accept mail", "fail",
                                      [stable_id("email", address, "undeliverable")],
                                      fingerprint("email", address, "undeliverable")))
            else:
                details["findings"].append({"code": "deliverability_unknown", "message": "Deliverability could "
                                            "not be verified: the DNS could not be reached."})
                rows.append(_unverified(address))
        except (EmailNotValidError, dns.exception.DNSException) as exc:  # resolver trouble: a warning
            details["findings"].append({"code": "deliverability_unknown",
                                        "message": f"Deliverability could not be verified ({exc})."})
            rows.append(_unverified(address))

        if _is_disposable(domain):
            details["disposable"] = True
            details["findings"].append({"code": "disposable", "message": f"{domain} is a disposable e-mail domain."})
            rows.append(ResultRow("Disposable e-mail domain", "warning", [stable_id("email", domain, "disposable")],
                                  fingerprint("email", domain, "disposable")))
        if not rows:
            rows.append(ResultRow("Valid, deliverable e-mail address", "pass"))
        state = ("deliverable" if details["deliverable"] else "not deliverable" if details["deliverable"] is False
                 else "deliverability could not be verified")
        summary = f"{address}: valid syntax, {state}" + (", disposable domain" if details["disposable"] else "")
        return _result(rows, details, summary + ".")


def _unverified(address: str) -> ResultRow:
    return ResultRow("E-mail deliverability not verified", "warning", [stable_id("email", address, "unknown")],
                     fingerprint("email", address, "unknown"))


def _dns_answered(exc: EmailUndeliverableError) -> bool:
    """The verdict rests on a DNS answer (no such domain, no mail records, a null MX or a reject-all SPF), not
    on an error while asking (email-validator wraps those in the same exception)."""
    return exc.__cause__ is None or isinstance(exc.__cause__, (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer))


def _sees_the_root(resolver) -> bool:
    """Whether the resolver reaches the DNS at all: the root zone's name servers always exist."""
    try:
        return len(resolver.resolve(".", "NS")) > 0
    except (dns.exception.DNSException, OSError):
        return False


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
