"""The ID check page's "Check again" (app/idchecks/services.py recheck_id_check): analysts only, consent ticked."""
from __future__ import annotations

import pytest

from tests.idchecks.test_id_checks_api import NSW_LICENCE, add_oac, run


@pytest.fixture
def verified(app, tenant):
    add_oac(app, tenant)
    return tenant


def test_check_again_from_the_portal(app, verified, login, factory):
    analyst = login(factory.user(verified, "analyst"))
    viewer = login(factory.user(verified, "viewer"))
    person = verified.entity(verified.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    first = run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE},
                person["uuid"]).get_json()["data"]
    page = analyst.get(f"/id-checks/{first['uuid']}").get_data(as_text=True)
    assert 'data-testid="recheck"' in page
    assert 'data-testid="recheck"' not in viewer.get(f"/id-checks/{first['uuid']}").get_data(as_text=True)
    assert viewer.post(f"/id-checks/{first['uuid']}/recheck", {"consent_obtained": "yes"}).status_code == 403

    r = analyst.post(f"/id-checks/{first['uuid']}/recheck", {})  # consent not ticked
    assert r.status_code == 302 and r.headers["Location"].endswith(first["uuid"])
    assert "Not checked again: Must be true: an ID check needs the person&#39;s express consent." \
        in analyst.get(r.headers["Location"]).get_data(as_text=True)
    r = analyst.post(f"/id-checks/{first['uuid']}/recheck", {"consent_obtained": "yes"})
    assert r.status_code == 302 and first["uuid"] not in r.headers["Location"]
    page = analyst.get(r.headers["Location"]).get_data(as_text=True)
    assert "Checked again as" in page and "a re-check of" in page and first["check_number"] in page


def test_no_check_again_where_the_service_would_refuse(app, verified, login, factory):
    """The page asks the service's rule (app/idchecks/rules.py): no button for details the retention deleted, nor
    for an archived entity's check."""
    from sqlalchemy import update

    from app.extensions import db
    from app.idchecks.models import IdCheck
    analyst = login(factory.user(verified, "analyst"))
    person = verified.entity(verified.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    forgotten, kept = (run(verified, {"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE},
                           person["uuid"]).get_json()["data"] for _ in range(2))
    with app.app_context():  # the program's retention deleted the sealed details
        db.session.execute(update(IdCheck).where(IdCheck.uuid == forgotten["uuid"]).values(data_sealed=None))
        db.session.commit()
    assert 'data-testid="recheck"' not in analyst.get(f"/id-checks/{forgotten['uuid']}").get_data(as_text=True)
    assert 'data-testid="recheck"' in analyst.get(f"/id-checks/{kept['uuid']}").get_data(as_text=True)

    assert verified.api.post(f"/entities/{person['uuid']}/archive").status_code == 200
    assert 'data-testid="recheck"' not in analyst.get(f"/id-checks/{kept['uuid']}").get_data(as_text=True)
