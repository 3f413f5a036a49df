"""Providers: one interface (`Provider.run(subject, config, ctx) -> ProviderResult`) for every check type, and
the registry of the check types (`registry.CHECK_TYPES`: labels, prices, subject needs, options, providers).

Which implementation answers (`provider_for`, from each registry entry's `providers`):

| check type | sandbox account | live account |
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
A live account whose check type has no configured upstream fails that check with a clear reason (refunded).

Sandbox magic inputs apply to every check type in sandbox accounts: `sandbox-fail` (last_name or business_name)
fails the provider; `sandbox-timeout` times it out (retried, then failed); `sandbox-slow` answers after two seconds;
`sandbox-hit` makes the check types with a paid upstream return one warning result.
"""
from __future__ import annotations

from typing import Any

from app.providers.base import (Provider, ProviderError, ProviderNotConfigured, ProviderResult, ResultRow, RunContext,
                                Subject)
from app.providers.registry import CHECK_TYPES, provider_for

__all__ = ["CHECK_TYPES", "Provider", "ProviderError", "ProviderNotConfigured", "ProviderResult", "ResultRow",
           "RunContext", "Subject", "provider_for", "run_provider"]


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
