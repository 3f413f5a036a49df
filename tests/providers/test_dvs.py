"""The DVS adapter (app/providers/dvs.py) against a real local HTTP server that replays answers hand-written to the
shape the adapter assumes (tests/fixtures/id_providers, each marked so) and keeps the requests it got: Y/N/D, the
hub's S, a refusal echoing the numbers, the request's fields and headers, document numbers never in a log line or an
error; and an ID check run through the service for a live account with DVS_GATEWAY_URL set. (The HTTP errors,
malformed JSON and timeouts the three adapters share: test_id_gateways.py.)"""
from __future__ import annotations

import json
import logging
import socket

import pytest

from app.providers.base import ProviderError, ProviderNotConfigured
from app.providers.dvs import DvsProvider
from app.providers.id_base import IdProvider, IdRequest
from app.providers.id_gateway import scrub
from app.providers.id_types import ID_TYPES
from tests.providers.gateway import LocalGateway


# ------------------------------------------------------------------ the local gateway (tests/providers/gateway.py)

def unused_port_url() -> str:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


# ------------------------------------------------------------------ the adapter

PERSON = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14"}
DATA = {
    "drivers_licence": {**PERSON, "state": "NSW", "licence_number": "12345678", "card_number": "2012345678"},
    "passport": {**PERSON, "gender": "F", "document_number": "PA1234567"},
    "medicare": {**PERSON, "middle_name": "J", "card_number": "2123456701", "individual_reference_number": "1",
                 "card_type": "green", "card_expiry": "2027-05"},
    "visa": {**PERSON, "passport_number": "X9876543", "country_of_issue": "GBR"},
    "birth_certificate": {**PERSON, "registration_state": "VIC", "registration_number": "1990/12345",
                          "registration_date": "1990-03-01"},
    "centrelink": {**PERSON, "card_type": "HCC", "customer_reference_number": "123456789A",
                   "card_expiry": "2027-01-31"},
    "citizenship_certificate": {**PERSON, "stock_number": "ACC1234567", "acquisition_date": "2012-01-26"},
}
REQUEST = IdRequest(reference="5b0f6a8e-0d7c-4a43-9a38-2d4c1f0e9b71", oac="OAC1", requester_name="Bar Bank of Wombats",
                    sandbox=False)


def dvs(gateway: LocalGateway, id_type: str = "drivers_licence", **settings) -> DvsProvider:
    return DvsProvider({"DVS_GATEWAY_URL": gateway.url, "DVS_GATEWAY_KEY": "dvs-key", "DVS_GATEWAY_TIMEOUT": 2.0,
                        **settings}, id_type=id_type)


def numbers(id_type: str) -> list[str]:
    return [DATA[id_type][k] for k in ID_TYPES[id_type].numbers if DATA[id_type].get(k)]


def test_every_dvs_id_type_has_data_here_and_is_built_by_the_registry_when_configured(gateway):
    dvs_types = [e.name for e in ID_TYPES.entries() if e.check_type == "dvs"]
    assert sorted(dvs_types) == sorted(DATA)
    for id_type in dvs_types:
        provider = ID_TYPES[id_type].provider(sandbox=False, settings={"DVS_GATEWAY_URL": gateway.url})
        assert isinstance(provider, DvsProvider) and isinstance(provider, IdProvider)
        assert provider.id_type == id_type and provider.name == "dvs"
    assert ID_TYPES["passport"].provider(sandbox=False, settings={}).name == "unconfigured"
    assert ID_TYPES["passport"].provider(sandbox=True, settings={"DVS_GATEWAY_URL": gateway.url}).name == "sandbox"


def test_y_passes_with_the_hubs_references_and_the_request_follows_the_interface(gateway):
    gateway.answer(200, "dvs_y.json")
    answer = dvs(gateway).verify(dict(DATA["drivers_licence"]), REQUEST)
    assert (answer.outcome, answer.provider) == ("pass", "dvs")
    assert answer.details == {"verification_result_code": "Y", "originating_agency_code": "RA-NSW",
                              "verification_request_number": "DVS-20261123-0001842", "additional_information": []}
    assert answer.outcome_summary == "The issuer's record matches the details."

    [request] = gateway.requests
    assert request["method"] == "POST" and request["path"] == "/verifications"
    headers = request["headers"]
    assert headers["authorization"] == "Bearer dvs-key" and headers["x-dvs-oac"] == "OAC1"
    assert headers["content-type"].startswith("application/json") and headers["accept"] == "application/json"
    assert json.loads(request["raw"]) == {
        "documentType": "DriverLicence", "clientReference": REQUEST.reference, "consentObtained": True,
        "requesterName": "Bar Bank of Wombats",
        "document": {"givenName": "Harriet", "familyName": "Wombatson", "birthDate": "1990-02-14",
                     "stateOfIssue": "NSW", "licenceNumber": "12345678", "cardNumber": "2012345678"}}


@pytest.mark.parametrize("id_type, document_type, document", [
    ("passport", "Passport", {"travelDocumentNumber": "PA1234567", "gender": "F"}),
    ("medicare", "Medicare", {"nameLine1": "Harriet J Wombatson", "cardNumber": "2123456701",
                              "individualReferenceNumber": "1", "cardType": "G", "cardExpiry": "2027-05"}),
    ("visa", "Visa", {"passportNumber": "X9876543", "countryOfIssue": "GBR"}),
    ("birth_certificate", "BirthCertificate", {"registrationState": "VIC", "registrationNumber": "1990/12345",
                                               "registrationDate": "1990-03-01"}),
    ("centrelink", "CentrelinkCard", {"name": "Harriet Wombatson", "cardType": "HCC",
                                      "customerReferenceNumber": "123456789A", "cardExpiry": "2027-01-31"}),
    ("citizenship_certificate", "CitizenshipCertificate", {"stockNumber": "ACC1234567",
                                                           "acquisitionDate": "2012-01-26"}),
])
def test_each_document_type_sends_the_hubs_fields(gateway, id_type, document_type, document):
    gateway.answer(200, "dvs_activity_only.json")
    answer = dvs(gateway, id_type).verify(dict(DATA[id_type]), REQUEST)
    sent = gateway.sent
    assert sent["documentType"] == document_type
    names = {"givenName": "Harriet", "familyName": "Wombatson"} if id_type not in ("medicare", "centrelink") else {}
    assert sent["document"] == {**names, "birthDate": "1990-02-14", **document}
    # no request number: the activity id stands in; no agency: the ID type's own (as the sandbox names it)
    assert answer.details["verification_request_number"] == "41f6b0e9-d3a2-4c57-b8e1-0a7c9d2e6f35"
    assert answer.details["originating_agency_code"] == (
        "BDM-VIC" if id_type == "birth_certificate" else ID_TYPES[id_type].agency)


def test_n_and_d_fail_and_are_answers(gateway):
    gateway.answer(200, "dvs_n.json")
    n = dvs(gateway, "passport").verify(dict(DATA["passport"]), REQUEST)
    assert n.outcome == "fail" and n.details["verification_result_code"] == "N"
    assert n.details["originating_agency_code"] == "DFAT"
    assert n.details["additional_information"] == ["The details supplied do not match the issuer's record."]
    gateway.answer(200, "dvs_d.json")
    d = dvs(gateway).verify(dict(DATA["drivers_licence"]), REQUEST)
    assert (d.outcome, d.details["verification_result_code"]) == ("fail", "D")
    assert d.outcome_summary == "The issuer has no record of this document."
    # the issuer's words quote the numbers: kept without them
    assert d.details["additional_information"] == ["Licence […] with card […] was not found."]


def test_the_details_fit_the_api_schema_as_the_sandboxs_do(gateway):
    from app.idchecks.schemas import DvsDetails
    from app.providers.id_sandbox import SandboxIdProvider

    gateway.answer(200, "dvs_d.json")
    real = dvs(gateway).verify(dict(DATA["drivers_licence"]), REQUEST).details
    sandbox = SandboxIdProvider(ID_TYPES["drivers_licence"]).verify(dict(DATA["drivers_licence"]), REQUEST).details
    assert set(real) == set(sandbox)
    assert DvsDetails.model_validate(real).model_dump() == real


# The gateway's HTTP errors, unreadable answers and timeouts, shared with the NZ and payroll adapters:
# test_id_gateways.py.
@pytest.mark.parametrize("status, fixture, body, expected, retryable", [
    # every value sent is taken out of the gateway's words (the state too)
    (400, "dvs_refused.json", b"", "The DVS gateway answered HTTP 400: INVALID_REQUEST; cardNumber […] is not valid "
                                   "for licenceNumber […] (stateOfIssue […])", False),
    (200, "dvs_no_code.json", b"", "The DVS gateway answered without a readable result code", False),
    (200, None, b'{"verificationResultCode": "Y", "activityId": {"id": 1}}',
     "The DVS gateway answered an unreadable activity id", False),
    (200, "dvs_s.json", b"", "the DVS hub or the issuer's system failed (result code S)", True),
], ids=["400-echoes-numbers", "no-code", "bad-id", "S"])
def test_failures_are_provider_errors_without_the_numbers(gateway, caplog, status, fixture, body, expected,
                                                          retryable):
    caplog.set_level(logging.DEBUG)
    gateway.answer(status, fixture, body=body)
    with pytest.raises(ProviderError) as caught:
        dvs(gateway).verify(dict(DATA["drivers_licence"]), REQUEST)
    assert str(caught.value) == expected
    assert caught.value.retryable is retryable and not isinstance(caught.value, ProviderNotConfigured)
    for number in numbers("drivers_licence"):
        assert number not in str(caught.value) and number not in caplog.text


def test_an_unreachable_gateway_is_a_retryable_provider_error():
    provider = DvsProvider({"DVS_GATEWAY_URL": unused_port_url(), "DVS_GATEWAY_KEY": "k"}, id_type="passport")
    with pytest.raises(ProviderError, match="unreachable") as caught:
        provider.verify(dict(DATA["passport"]), REQUEST)
    assert caught.value.retryable


def test_a_base_url_with_a_path_keeps_it(gateway):
    gateway.answer(200, "dvs_y.json")
    DvsProvider({"DVS_GATEWAY_URL": gateway.url + "/gsp/v2/", "DVS_GATEWAY_KEY": "k"},
                id_type="passport").verify(dict(DATA["passport"]), REQUEST)
    assert gateway.requests[0]["path"] == "/gsp/v2/verifications"


def test_no_key_or_no_oac_is_refused_before_any_request(gateway):
    with pytest.raises(ProviderNotConfigured, match="no API key"):
        dvs(gateway, "passport", DVS_GATEWAY_KEY=None).verify(dict(DATA["passport"]), REQUEST)
    with pytest.raises(ProviderError, match="OAC"):
        dvs(gateway, "passport").verify(dict(DATA["passport"]), IdRequest(reference="r", oac=None, sandbox=False))
    with pytest.raises(ProviderError, match="no nz_passport documents"):
        dvs(gateway, "nz_passport").verify({**PERSON, "passport_number": "LA123456"}, REQUEST)
    assert gateway.requests == []


def test_the_timeout_follows_the_configuration(gateway):
    assert dvs(gateway, DVS_GATEWAY_TIMEOUT=7).client.timeout.read == 7
    assert DvsProvider({"DVS_GATEWAY_URL": gateway.url, "PROVIDER_TIMEOUT": 4}).client.timeout.read == 4
    assert DvsProvider({"DVS_GATEWAY_URL": gateway.url}).client.timeout.read == 10
    from app.config import Config
    for key in ("DVS_GATEWAY_URL", "DVS_GATEWAY_KEY", "DVS_GATEWAY_TIMEOUT", "NZ_GATEWAY_TIMEOUT",
                "PAYROLL_GATEWAY_TIMEOUT"):
        assert hasattr(Config, key)


@pytest.mark.parametrize("id_type", sorted(DATA))
def test_no_document_number_is_logged_on_success(gateway, caplog, id_type):
    caplog.set_level(logging.DEBUG)
    gateway.answer(200, "dvs_y.json")
    dvs(gateway, id_type).verify(dict(DATA[id_type]), REQUEST)
    assert "DVS" in caplog.text and REQUEST.reference in caplog.text  # it does log the answer...
    for number in numbers(id_type):
        assert number not in caplog.text  # ...never the number
        assert number not in gateway.requests[0]["path"]


def test_scrub_takes_out_what_was_sent_and_long_digit_runs():
    assert scrub("Card 2012345678 / licence AB12cd for Harriet", ["ab12CD", "Harriet", "M", None]) \
        == "Card […] / licence […] for […]"
    assert scrub("state NT unknown", ["NT"]) == "state […] unknown" and scrub("ANTS", ["NT"]) == "ANTS"


# ------------------------------------------------------------------ through the service, for a live account

def test_a_live_accounts_id_check_with_a_dvs_gateway_uses_the_adapter_and_records_its_answer(
        app, factory, gateway, monkeypatch, caplog):
    from sqlalchemy import select

    from app.extensions import db
    from app.idchecks.models import IdCheck
    from tests.idchecks.test_id_checks_api import add_oac, balance

    caplog.set_level(logging.DEBUG)
    monkeypatch.setitem(app.config, "DVS_GATEWAY_URL", gateway.url)
    monkeypatch.setitem(app.config, "DVS_GATEWAY_KEY", "dvs-key")
    monkeypatch.setitem(app.config, "DVS_GATEWAY_TIMEOUT", 0.5)
    live = factory.tenant(sandbox=False)
    add_oac(app, live)
    before = balance(live)
    body = {"id_type": "drivers_licence", "consent_obtained": True,
            "data": {**DATA["drivers_licence"], "licence_number": "1234 5678"}}

    gateway.answer(200, "dvs_y.json")
    r = live.api.post("/adhoc-id-checks", json=body)
    assert r.status_code == 200, r.get_json()
    d = r.get_json()["data"]
    assert (d["outcome"], d["check_type"]) == ("pass", "dvs")
    assert d["details"] == {"verification_result_code": "Y", "originating_agency_code": "RA-NSW",
                            "verification_request_number": "DVS-20261123-0001842", "additional_information": []}
    assert gateway.sent["document"]["licenceNumber"] == "12345678"  # normalised by the ID type's schema
    assert gateway.sent["clientReference"] == d["uuid"] and gateway.requests[0]["headers"]["x-dvs-oac"] == "OAC1"
    price = before - balance(live)
    assert price == live.api.get("/credit").get_json()["data"]["prices"]["drivers_licence"] > 0
    with app.app_context():
        row = db.session.scalar(select(IdCheck).where(IdCheck.uuid == d["uuid"]))
        assert (row.provider, row.is_sandbox, row.outcome, row.oac_code) == ("dvs", False, "pass", "OAC1")
        assert row.details["verification_request_number"] == "DVS-20261123-0001842"

    # the gateway's D is an answer too: recorded and charged
    gateway.answer(200, "dvs_d.json")
    d2 = live.api.post("/adhoc-id-checks", json=body).get_json()["data"]
    assert (d2["outcome"], d2["details"]["verification_result_code"]) == ("fail", "D")
    assert balance(live) == before - 2 * price

    # a timeout and a 5xx: 503, nothing recorded, nothing charged
    gateway.answer(200, "dvs_y.json", delay=1.5)
    gateway.answer(502, body=b"Bad Gateway", content_type="text/plain")
    for _ in range(2):
        r = live.api.post("/adhoc-id-checks", json=body)
        assert r.status_code == 503 and "Nothing was recorded" in r.get_json()["message"]
    assert balance(live) == before - 2 * price
    with app.app_context():
        assert db.session.scalar(select(db.func.count()).select_from(IdCheck)) == 2
    for number in ("12345678", "2012345678"):
        assert number not in caplog.text
