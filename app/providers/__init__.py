"""Providers: one interface (`Provider.run(subject, config, ctx) -> ProviderResult`) for every operation.

Which implementation answers (`provider_for`):

| operation | sandbox account | live account |
|---|---|---|
| pep_sanction_check, banned_disqualified_persons | our engine over the imported lists | same |
| phone_check | `phonenumbers` | same |
| email_check | `email-validator` + DNS, disposable-domain list | same |
| business_check | sandbox | ABN Lookup (`ABR_GUID`) |
| uk_business_check | sandbox | Companies House (`COMPANIES_HOUSE_API_KEY`) |
| adverse_media, adc_check, adc_custodian_check, court_check, realestate_check | sandbox | the vendor class named in `PROVIDER_CLASSES` |

To plug in a vendor: write a class with `check_type`, `name` and `run(subject, config, ctx)` returning a
`ProviderResult` (raise `ProviderError` on any upstream failure), and name it in the `PROVIDER_CLASSES`
setting, e.g. `{"adverse_media": "acme_media.provider:AcmeMedia"}`; it is built with the app's settings dict.
A live account whose operation has no configured upstream fails that check with a clear reason (refunded).

Sandbox magic inputs apply to every operation in sandbox accounts: `sandbox-fail` (last_name or business_name)
fails the provider; `sandbox-hit` makes the non-local operations return one warning result.
"""
from __future__ import annotations

import importlib
from typing import Any

from app.providers.base import (MAGIC_FAIL, OPERATIONS, Provider, ProviderError, ProviderNotConfigured,
                                ProviderResult, ResultRow, RunContext, Subject)

LOCAL_OPERATIONS = ("pep_sanction_check", "banned_disqualified_persons", "phone_check", "email_check")

__all__ = ["OPERATIONS", "LOCAL_OPERATIONS", "Provider", "ProviderError", "ProviderNotConfigured",
           "ProviderResult", "ResultRow", "RunContext", "Subject", "provider_for"]


class _SandboxMagic:
    """Wraps a local provider for sandbox accounts: `sandbox-fail` fails it like any other operation."""

    def __init__(self, inner: Provider):
        self.inner = inner
        self.check_type = inner.check_type
        self.name = inner.name

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        if subject.magic() == MAGIC_FAIL:
            raise ProviderError(f"sandbox: {self.check_type} provider failure forced by the subject name")
        return self.inner.run(subject, config, ctx)


def _local(check_type: str) -> Provider:
    if check_type == "pep_sanction_check":
        from app.providers.screening import PepSanctionProvider
        return PepSanctionProvider()
    if check_type == "banned_disqualified_persons":
        from app.providers.screening import BannedDisqualifiedProvider
        return BannedDisqualifiedProvider()
    if check_type == "phone_check":
        from app.providers.phone import PhoneProvider
        return PhoneProvider()
    from app.providers.email import EmailProvider
    return EmailProvider()


def _configured_class(check_type: str, settings: dict[str, Any]) -> Provider | None:
    path = (settings.get("PROVIDER_CLASSES") or {}).get(check_type)
    if not path:
        return None
    module_name, _, attr = path.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    return cls(settings)


def provider_for(check_type: str, *, sandbox: bool, settings: dict[str, Any] | None = None) -> Provider:
    """The implementation that answers `check_type` for an account in this mode."""
    settings = settings or {}
    if check_type not in OPERATIONS:
        raise ValueError(f"unknown operation {check_type!r}")
    if check_type in LOCAL_OPERATIONS:
        provider = _local(check_type)
        return _SandboxMagic(provider) if sandbox else provider
    if sandbox:
        from app.providers.sandbox import SandboxProvider
        return SandboxProvider(check_type)
    custom = _configured_class(check_type, settings)
    if custom is not None:
        return custom
    if check_type == "business_check" and settings.get("ABR_GUID"):
        from app.providers.abr import AbrProvider
        return AbrProvider(settings["ABR_GUID"], timeout=float(settings.get("PROVIDER_TIMEOUT", 10)))
    if check_type == "uk_business_check" and settings.get("COMPANIES_HOUSE_API_KEY"):
        from app.providers.companies_house import CompaniesHouseProvider
        return CompaniesHouseProvider(settings["COMPANIES_HOUSE_API_KEY"],
                                      timeout=float(settings.get("PROVIDER_TIMEOUT", 10)))
    return _Unconfigured(check_type)


class _Unconfigured:
    name = "unconfigured"

    def __init__(self, check_type: str):
        self.check_type = check_type

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        raise ProviderNotConfigured(f"no {self.check_type} upstream is configured for live accounts")


def run_provider(provider: Provider, subject: Subject, config: dict[str, Any] | None,
                 ctx: RunContext) -> ProviderResult:
    """Run a provider; anything it raises that is not already a ProviderError (a bug in an adapter, a malformed
    upstream answer it did not anticipate) becomes one, so the check fails and is refunded instead of crashing."""
    try:
        result = provider.run(subject, config, ctx)
    except ProviderError:
        raise
    except Exception as exc:  # noqa: BLE001 - a provider must never take the worker down
        raise ProviderError(f"{provider.check_type}: unexpected provider error: {type(exc).__name__}: {exc}") from exc
    if not isinstance(result, ProviderResult) or not result.results_overview:
        raise ProviderError(f"{provider.check_type}: the provider returned no result")
    return result
