"""What the three ID-check adapters (DVS, NZ identity, payroll and super) share through `id_gateway.GatewayClient`,
asked of each against the local gateway (tests/providers/gateway.py): an HTTP error is a `ProviderError` with the
gateway's scrubbed reason, retryable for 429 and 5xx, refused credentials are not retryable, an answer that is not a
JSON object is unreadable, a timeout is retryable and quick, and no value sent reaches an error text or a log line.
What each adapter reads from an answer is in its own file (test_dvs.py, test_nz_identity.py, test_payroll.py)."""
from __future__ import annotations

import logging
import time

import pytest

from app.providers.base import ProviderError
from tests.providers import test_dvs, test_nz_identity, test_payroll

# adapter -> (build it for the local gateway with settings, its timeout setting, the data it verifies, the request,
#             the values sent that must never come back, a successful answer's fixture)
ADAPTERS = {
    "dvs": (test_dvs.dvs, "DVS_GATEWAY_TIMEOUT", test_dvs.DATA["drivers_licence"], test_dvs.REQUEST,
            test_dvs.numbers("drivers_licence"), "dvs_y.json"),
    "nz_identity": (test_nz_identity.nz, "NZ_GATEWAY_TIMEOUT", test_nz_identity.LICENCE, test_nz_identity.REQUEST,
                    ["DI123456"], "nz_licence_match.json"),
    "payroll": (test_payroll.payroll, "PAYROLL_GATEWAY_TIMEOUT", test_payroll.BOTH, test_payroll.REQUEST,
                ["M99887766", "51824753556"], "payroll_both_y.json"),
}


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
@pytest.mark.parametrize("status, fixture, body, expected, retryable", [
    (500, "gateway_error.json", b"", "answered HTTP 500: INTERNAL_ERROR; An internal error occurred.", True),
    (503, None, b"<html>Service Unavailable</html>", "answered HTTP 503", True),
    (429, None, b"", "answered HTTP 429", True),
    (401, None, b'{"message": "bad key"}', "refused our credentials (HTTP 401)", False),
    (403, None, b"", "refused our credentials (HTTP 403)", False),
    (200, None, b"{not json", "answered something that is not JSON", False),
    (200, None, b'["Y"]', "answered a JSON document that is not an object", False),
], ids=["500", "503-html", "429", "401", "403", "garbled", "array"])
def test_gateway_failures_are_provider_errors_without_the_values_sent(gateway, caplog, adapter, status, fixture, body,
                                                                      expected, retryable):
    build, _, data, request, secrets, _ = ADAPTERS[adapter]
    caplog.set_level(logging.DEBUG)
    gateway.answer(status, fixture, body=body)
    provider = build(gateway)
    with pytest.raises(ProviderError) as caught:
        provider.verify(dict(data), request)
    assert str(caught.value) == f"{provider.label} {expected}" and caught.value.retryable is retryable
    for secret in secrets:
        assert secret not in str(caught.value) and secret not in caplog.text


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_a_timeout_is_a_retryable_provider_error(gateway, adapter):
    build, timeout, data, request, _, fixture = ADAPTERS[adapter]
    gateway.answer(200, fixture, delay=1.5)
    started = time.monotonic()
    with pytest.raises(ProviderError, match="did not answer in time") as caught:
        build(gateway, **{timeout: 0.3}).verify(dict(data), request)
    assert time.monotonic() - started < 1.4 and caught.value.retryable and len(gateway.requests) == 1
