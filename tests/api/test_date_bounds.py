"""Dates whose UTC value leaves the years 1..9999 are a 400 naming the field, on every list that filters by date,
never a 500 (issue 18). A bare date as an upper bound covers its whole day, 9999-12-31 included."""
from __future__ import annotations

from urllib.parse import quote

import pytest

OUT_OF_RANGE = [("created_at_from", "0001-01-01T00:00:00+14:00"), ("created_at_from", "9999-12-31T23:59:59-14:00"),
                ("created_at_to", "0001-01-01T00:00:00+14:00"), ("created_at_to", "9999-12-31T23:59:59-14:00")]


@pytest.fixture
def lists(tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace")
    tenant.api.post(f"/entities/{entity['uuid']}/notes", json={"note_text": "A note"})
    return ["/events", "/notes", f"/entities/{entity['uuid']}/checks", "/adhoc-checks"]


@pytest.mark.parametrize("name, value", OUT_OF_RANGE)
def test_a_date_outside_the_utc_years_is_a_400_with_the_field(tenant, lists, name, value):
    for path in lists:
        r = tenant.api.get(f"{path}?filter[{name}]={quote(value)}")
        assert r.status_code == 400, (path, r.status_code, r.get_data(as_text=True)[:300])
        assert r.get_json()["errors"] == {f"filter[{name}]": ["Must lie between the years 1 and 9999 in UTC."]}


def test_the_last_and_first_days_are_valid_bounds(tenant, lists):
    for path in lists:
        r = tenant.api.get(f"{path}?filter[created_at_from]=0001-01-01&filter[created_at_to]=9999-12-31")
        assert r.status_code == 200, (path, r.get_data(as_text=True)[:300])
    notes = tenant.api.get("/notes?filter[created_at_to]=9999-12-31").get_json()
    assert notes["meta"]["total"] == 1  # the whole last day, and everything before it


def test_the_inbox_ignores_a_last_day_it_cannot_extend(app, tenant, factory):
    from tests.portal.conftest import PortalClient
    portal = PortalClient(factory.login(tenant.email), tenant.email)
    assert portal.get("/?to=9999-12-31").status_code == 200
    assert portal.get("/?from=0001-01-01").status_code == 200
