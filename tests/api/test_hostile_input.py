"""Input that used to reach a 500 (issue 7 §5): each answers a 4xx with the standard error body."""
from __future__ import annotations

import json

import pytest


def assert_error(response, status, field=None):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:300])
    body = response.get_json()
    assert body["message"] and body["api_reference"] == response.headers["X-Request-Id"]
    if field is not None:
        assert field in body.get("errors", {}), body
    return body


@pytest.mark.parametrize("field", ["program_name"])
def test_nul_byte_in_a_body_field(tenant, field):
    assert_error(tenant.api.post("/programs", json={field: "Bad\x00name"}), 400, field)


def test_nul_and_control_characters_in_entity_names(tenant):
    program = tenant.program()
    url = f"/programs/{program['uuid']}/entities"
    for value in ("Ada\x00", "Ada\x07Lovelace", "Ada\x1b[31m"):
        assert_error(tenant.api.post(url, json={"entity_type": "individual", "first_name": value,
                                                "last_name": "Lovelace"}), 400, "first_name")
    ok = tenant.api.post(url, json={"entity_type": "individual", "first_name": "Ada", "last_name": "O'Brien-Lovelace"})
    assert ok.status_code == 201


def test_nul_in_a_note(tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    assert_error(tenant.api.post(f"/entities/{entity['uuid']}/notes", json={"note_text": "a\x00b"}), 400,
                 "note_text")


@pytest.mark.parametrize("param", ["filter[reference_number]", "filter[entity_number]"])
def test_nul_in_filters(tenant, param):
    program = tenant.program()
    assert_error(tenant.api.get(f"/programs/{program['uuid']}/entities", query_string={param: "x\x00y"}), 400,
                 param)
    assert_error(tenant.api.get("/programs", query_string={"filter[program_name]": "\x1b[2J"}), 400,
                 "filter[program_name]")


def test_nul_in_a_note_filter(tenant):
    assert_error(tenant.api.get("/notes", query_string={"filter[created_by]": "\x00"}), 400,
                 "filter[created_by]")


def test_nul_in_a_csv_cell(tenant):
    import io
    program = tenant.program()
    data = {"file": (io.BytesIO(b"entity_type,first_name,last_name\nindividual,Ada\x00,Lovelace\n"), "e.csv")}
    r = tenant.api.client.post(f"/api/v1/programs/{program['uuid']}/entities/bulk", data=data,
                               headers={"Authorization": f"Bearer {tenant.api.secret}"},
                               content_type="multipart/form-data")
    body = assert_error(r, 400)
    assert any("first_name" in key for key in body["errors"]), body


def test_deeply_nested_json(tenant):
    body = "[" * 1000 + "]" * 1000
    r = tenant.api.client.post("/api/v1/programs", data=body, content_type="application/json",
                               headers={"Authorization": f"Bearer {tenant.api.secret}"})
    assert_error(r, 400)
    nested = {"program_name": "x"}
    for _ in range(200):
        nested = {"a": nested}
    r = tenant.api.client.post("/api/v1/programs", data=json.dumps(nested), content_type="application/json",
                               headers={"Authorization": f"Bearer {tenant.api.secret}"})
    assert_error(r, 400)


@pytest.mark.parametrize("param, value", [("per_page", "²"), ("page", "١"), ("per_page", "１０"),
                                          ("page", "-1"), ("per_page", "1e3")])
def test_non_ascii_digits_in_integers(tenant, param, value):
    assert_error(tenant.api.get("/programs", query_string={param: value}), 400, param)


@pytest.mark.parametrize("value", ["99999-01-01", "0000-00-00", "2024-13-40", "10000-01-01T00:00:00Z"])
def test_dates_out_of_range_in_filters(tenant, value):
    assert_error(tenant.api.get("/notes", query_string={"filter[created_at_from]": value}), 400,
                 "filter[created_at_from]")
    assert_error(tenant.api.get("/notes", query_string={"filter[created_at_to]": value}), 400,
                 "filter[created_at_to]")


def test_like_wildcards_match_literally(tenant):
    for name in ("Percent%Name", "Under_score", "Plain name"):
        tenant.program(program_name=name)

    def names(q):
        r = tenant.api.get("/programs", query_string={"filter[program_name]": q})
        return sorted(p["program_name"] for p in r.get_json()["data"])
    assert names("%") == ["Percent%Name"]
    assert names("_") == ["Under_score"]
    assert names("t%N") == ["Percent%Name"]


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_json_endpoints_need_json(tenant, content_type):
    headers = {"Authorization": f"Bearer {tenant.api.secret}"}
    if content_type:
        headers["Content-Type"] = content_type
    r = tenant.api.client.post("/api/v1/programs", data='{"program_name": "Typed"}', headers=headers)
    body = assert_error(r, 415)
    assert "application/json" in body["message"]


def test_json_with_charset_is_fine(tenant):
    r = tenant.api.client.post("/api/v1/programs", data='{"program_name": "Typed"}',
                               headers={"Authorization": f"Bearer {tenant.api.secret}",
                                        "Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 201


def test_unsupported_method_is_405_with_allow(tenant):
    program = tenant.program()
    r = tenant.api.request("PUT", f"/programs/{program['uuid']}", json={})
    assert_error(r, 405)
    assert set(r.headers["Allow"].split(", ")) >= {"GET", "PATCH", "DELETE"}
    r = tenant.api.request("DELETE", "/programs")
    assert_error(r, 405)
    assert "POST" in r.headers["Allow"]
