"""The payroll and super adapter (app/providers/payroll.py) against a real local HTTP server replaying answers
hand-written to the shape it assumes (tests/fixtures/id_providers): Y, N, a source asked but unanswered, the
request's fields (only the sources asked), the member number never logged (HTTP errors, malformed JSON and
timeouts: test_id_gateways.py)."""
from __future__ import annotations

import json
import logging

import pytest

from app.idchecks.schemas import PayrollSuperDetails
from app.providers.base import ProviderError
from app.providers.id_base import IdRequest
from app.providers.id_sandbox import SandboxIdProvider
from app.providers.id_types import ID_TYPES
from app.providers.payroll import PayrollProvider
from tests.providers.gateway import LocalGateway

PERSON = {"first_name": "Aroha", "last_name": "Ngata", "birth_date": "1985-07-01"}
BOTH = {**PERSON, "employer_abn": "51824753556", "super_fund_usi": "STA0100AU", "member_number": "M99887766"}
PAYROLL_ONLY = {**PERSON, "employer_abn": "51824753556"}
REQUEST = IdRequest(reference="8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d", requester_name="Bar Bank of Wombats",
                    sandbox=False)


def payroll(gateway: LocalGateway, **settings) -> PayrollProvider:
    return PayrollProvider({"PAYROLL_GATEWAY_URL": gateway.url, "PAYROLL_GATEWAY_KEY": "pay-key",
                            "PAYROLL_GATEWAY_TIMEOUT": 2.0, **settings}, id_type="payroll_super")


def test_the_registry_builds_it_when_configured(gateway):
    provider = ID_TYPES["payroll_super"].provider(sandbox=False, settings={"PAYROLL_GATEWAY_URL": gateway.url})
    assert isinstance(provider, PayrollProvider) and provider.id_type == "payroll_super"


def test_both_sources_y_pass_and_the_request_follows_the_interface(gateway):
    gateway.answer(200, "payroll_both_y.json")
    answer = payroll(gateway).verify(dict(BOTH), REQUEST)
    assert (answer.outcome, answer.provider) == ("pass", "payroll")
    assert answer.details == {"api_reference": "pay-6b2e9d04c1f7", "payroll_person": "Y", "super_person": "Y"}
    [request] = gateway.requests
    assert request["path"] == "/verifications" and request["headers"]["authorization"] == "Bearer pay-key"
    assert json.loads(request["raw"]) == {
        "clientReference": REQUEST.reference, "consentObtained": True, "requesterName": "Bar Bank of Wombats",
        "person": {"givenName": "Aroha", "familyName": "Ngata", "birthDate": "1985-07-01"},
        "payroll": {"employerAbn": "51824753556"},
        "superannuation": {"fundUsi": "STA0100AU", "memberNumber": "M99887766"}}


def test_payroll_n_fails_and_only_the_source_asked_is_sent(gateway):
    gateway.answer(200, "payroll_n.json")
    answer = payroll(gateway).verify(dict(PAYROLL_ONLY), REQUEST)
    assert answer.outcome == "fail" and answer.outcome_summary == "The issuer's record does not match the details."
    assert answer.details == {"api_reference": "pay-d81a3c5e7f02", "payroll_person": "N", "super_person": None}
    assert "superannuation" not in gateway.sent


def test_one_source_y_passes(gateway):
    gateway.answer(200, "payroll_super_y_payroll_n.json")
    answer = payroll(gateway).verify(dict(BOTH), REQUEST)
    assert answer.outcome == "pass" and (answer.details["payroll_person"], answer.details["super_person"]) == ("N", "Y")


def test_a_source_not_asked_is_recorded_as_not_asked(gateway):
    gateway.answer(200, "payroll_super_y_payroll_n.json")  # answers super although only payroll was asked
    answer = payroll(gateway).verify(dict(PAYROLL_ONLY), REQUEST)
    assert answer.outcome == "fail" and answer.details["super_person"] is None


def test_the_details_fit_the_api_schema_as_the_sandboxs_do(gateway):
    gateway.answer(200, "payroll_n.json")
    real = payroll(gateway).verify(dict(PAYROLL_ONLY), REQUEST).details
    sandbox = SandboxIdProvider(ID_TYPES["payroll_super"]).verify(dict(PAYROLL_ONLY), REQUEST).details
    assert set(real) == set(sandbox) and PayrollSuperDetails.model_validate(real).model_dump() == real


# The gateway's HTTP errors, unreadable answers and timeouts, shared with the other adapters: test_id_gateways.py.
@pytest.mark.parametrize("status, fixture, body, expected, retryable", [
    (200, "payroll_unanswered.json", b"", "The payroll and super gateway answered no readable payroll result", False),
    (200, None, b'{"payrollPerson": "Y", "superPerson": "Y"}', "The payroll and super gateway answered without an "
                                                               "API reference", False),
    (200, None, b'{"apiReference": "p", "payrollPerson": "maybe", "superPerson": "Y"}',
     "The payroll and super gateway answered no readable payroll result", False),
], ids=["unanswered", "no-reference", "bad-value"])
def test_failures_are_provider_errors_without_the_member_number(gateway, caplog, status, fixture, body, expected,
                                                                retryable):
    caplog.set_level(logging.DEBUG)
    gateway.answer(status, fixture, body=body)
    with pytest.raises(ProviderError) as caught:
        payroll(gateway).verify(dict(BOTH), REQUEST)
    assert str(caught.value) == expected and caught.value.retryable is retryable
    assert "M99887766" not in caplog.text


def test_no_source_is_refused_before_any_request(gateway):
    with pytest.raises(ProviderError, match="ABN or the fund's USI"):
        payroll(gateway).verify(dict(PERSON), REQUEST)
    assert gateway.requests == []


def test_the_member_number_is_never_logged(gateway, caplog):
    caplog.set_level(logging.DEBUG)
    gateway.answer(200, "payroll_both_y.json")
    payroll(gateway).verify(dict(BOTH), REQUEST)
    assert REQUEST.reference in caplog.text and "M99887766" not in caplog.text
    assert "M99887766" not in gateway.requests[0]["path"]
