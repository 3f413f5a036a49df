"""The NZ identity adapter (app/providers/nz_identity.py: NZTA driver licence, DIA passport) against a real local
HTTP server replaying answers hand-written to the shape it assumes (tests/fixtures/id_providers): Match, NoMatch and
NotFound (the DVS's Y/N/D), unreadable answers, the request's fields, numbers never logged (HTTP errors and timeouts:
test_id_gateways.py)."""
from __future__ import annotations

import json
import logging

import pytest

from app.idchecks.schemas import NzDetails
from app.providers.base import ProviderError
from app.providers.id_base import IdRequest
from app.providers.id_sandbox import SandboxIdProvider
from app.providers.id_types import ID_TYPES
from app.providers.nz_identity import NzIdentityProvider
from tests.providers.gateway import LocalGateway

PERSON = {"first_name": "Aroha", "middle_name": "Mere", "last_name": "Ngata", "birth_date": "1985-07-01"}
LICENCE = {**PERSON, "licence_number": "DI123456", "version_number": "002"}
PASSPORT = {**PERSON, "passport_number": "LA123456", "expiry_date": "2030-01-01"}
REQUEST = IdRequest(reference="0d9e3c1a-6f2b-4e85-9c47-b1a2d3e4f5a6", requester_name="Bar Bank of Wombats",
                    sandbox=False)


def nz(gateway: LocalGateway, id_type: str = "nz_drivers_licence", **settings) -> NzIdentityProvider:
    return NzIdentityProvider({"NZ_GATEWAY_URL": gateway.url, "NZ_GATEWAY_KEY": "nz-key", "NZ_GATEWAY_TIMEOUT": 2.0,
                               **settings}, id_type=id_type)


def test_the_registry_builds_it_for_both_nz_types_when_configured(gateway):
    for id_type in ("nz_drivers_licence", "nz_passport"):
        provider = ID_TYPES[id_type].provider(sandbox=False, settings={"NZ_GATEWAY_URL": gateway.url})
        assert isinstance(provider, NzIdentityProvider) and provider.id_type == id_type


def test_a_licence_match_passes_and_the_request_follows_the_interface(gateway):
    gateway.answer(200, "nz_licence_match.json")
    answer = nz(gateway).verify(dict(LICENCE), REQUEST)
    assert (answer.outcome, answer.provider) == ("pass", "nz_identity")
    assert answer.details == {"api_reference": "nzta-5f0c2d9e81a4", "reporting_reference": "DLV20261123-4471",
                              "match_status": "Match", "document_verified": True, "additional_information": None}
    [request] = gateway.requests
    assert request["path"] == "/driver-licence-verifications"
    assert request["headers"]["authorization"] == "Bearer nz-key"
    assert json.loads(request["raw"]) == {
        "clientReference": REQUEST.reference, "consentObtained": True, "requesterName": "Bar Bank of Wombats",
        "person": {"givenName": "Aroha", "middleName": "Mere", "familyName": "Ngata", "dateOfBirth": "1985-07-01"},
        "licence": {"number": "DI123456", "version": "002"}}


def test_a_passport_match_passes_and_sends_the_passport(gateway):
    gateway.answer(200, "nz_passport_match.json")
    answer = nz(gateway, "nz_passport").verify(dict(PASSPORT), REQUEST)
    assert answer.outcome == "pass" and answer.details["api_reference"] == "dia-31c7e0f5b2a8"
    assert gateway.requests[0]["path"] == "/passport-verifications"
    assert gateway.sent["passport"] == {"number": "LA123456", "expiryDate": "2030-01-01"}
    assert "licence" not in gateway.sent


def test_no_match_fails_with_the_issuers_words_without_the_number(gateway):
    gateway.answer(200, "nz_licence_nomatch.json")
    answer = nz(gateway).verify(dict(LICENCE), REQUEST)
    assert answer.outcome == "fail" and answer.outcome_summary == "The issuer's record does not match the details."
    assert answer.details["match_status"] == "NoMatch" and answer.details["document_verified"] is False
    assert answer.details["additional_information"] == "The version number […]/[…] is not the current card."


def test_not_found_fails_as_no_match_saying_so(gateway):
    gateway.answer(200, "nz_passport_notfound.json")
    answer = nz(gateway, "nz_passport").verify(dict(PASSPORT), REQUEST)
    assert answer.outcome == "fail" and answer.details["match_status"] == "NoMatch"
    assert answer.details["additional_information"] == "The issuer has no record of this document."


def test_a_match_whose_document_is_not_verified_fails(gateway):
    gateway.answer(200, body=json.dumps({"apiReference": "nzta-1", "matchStatus": "Match",
                                         "documentVerified": False}).encode())
    answer = nz(gateway).verify(dict(LICENCE), REQUEST)
    assert answer.outcome == "fail" and answer.details["document_verified"] is False


@pytest.mark.parametrize("fixture", ["nz_licence_match.json", "nz_passport_notfound.json"])
def test_the_details_fit_the_api_schema_as_the_sandboxs_do(gateway, fixture):
    gateway.answer(200, fixture)
    real = nz(gateway).verify(dict(LICENCE), REQUEST).details
    sandbox = SandboxIdProvider(ID_TYPES["nz_drivers_licence"]).verify(dict(LICENCE), REQUEST).details
    assert set(real) == set(sandbox) and NzDetails.model_validate(real).model_dump() == real


# The gateway's HTTP errors, unreadable answers and timeouts, shared with the other adapters: test_id_gateways.py.
@pytest.mark.parametrize("status, fixture, body, expected, retryable", [
    (200, "nz_no_status.json", b"", "The NZ identity gateway answered without a readable match status, "
                                    "verification or reference", False),
    (200, None, b'{"apiReference": "x", "matchStatus": "Match", "documentVerified": true, '
                b'"additionalInformation": ["a"]}', "The NZ identity gateway answered unreadable additional "
                                                   "information", False),
], ids=["no-status", "bad-info"])
def test_failures_are_provider_errors_without_the_numbers(gateway, caplog, status, fixture, body, expected,
                                                          retryable):
    caplog.set_level(logging.DEBUG)
    gateway.answer(status, fixture, body=body)
    with pytest.raises(ProviderError) as caught:
        nz(gateway).verify(dict(LICENCE), REQUEST)
    assert str(caught.value) == expected and caught.value.retryable is retryable
    assert "DI123456" not in caplog.text


def test_an_unknown_type_is_refused_before_any_request(gateway):
    with pytest.raises(ProviderError, match="verifies no passport documents"):
        nz(gateway, "passport").verify(dict(PASSPORT), REQUEST)
    assert gateway.requests == []


@pytest.mark.parametrize("id_type, data, fixture", [("nz_drivers_licence", LICENCE, "nz_licence_nomatch.json"),
                                                    ("nz_passport", PASSPORT, "nz_passport_match.json")])
def test_no_document_number_is_logged(gateway, caplog, id_type, data, fixture):
    caplog.set_level(logging.DEBUG)
    gateway.answer(200, fixture)
    nz(gateway, id_type).verify(dict(data), REQUEST)
    assert REQUEST.reference in caplog.text
    number = data.get("licence_number") or data["passport_number"]
    assert number not in caplog.text and number not in gateway.requests[0]["path"]
