"""The portal's monitor pages: the form's refusals shown next to their inputs (nothing written), edit, pause,
delete and the portal-only restore, and a viewer who may look but not write."""
from __future__ import annotations

PEP = "pep_sanction_check"


def test_create_refusals_edit_pause_delete_and_restore(app, tenant, admin):
    p = tenant.program()
    page = f"/programs/{p['uuid']}/monitors"
    r = admin.post(f"{page}/new", {"monitor_name": "ab", "monitor_check_type": PEP, "status": "active",
                                    "schedule": "every_day", f"config.{PEP}.similarity_threshold": "80"})
    assert r.status_code == 422 and "monitor name" in r.get_data(as_text=True)
    r = admin.post(f"{page}/new", {"monitor_name": "Nightly", "monitor_check_type": PEP, "status": "active",
                                    "schedule": "every_day", f"config.{PEP}.similarity_threshold": "85"})
    assert r.status_code == 422 and 'class="field has-error"' in r.get_data(as_text=True)
    assert tenant.api.get(f"/programs/{p['uuid']}/monitors").get_json()["meta"]["total"] == 0
    r = admin.post(f"{page}/new", {"monitor_name": "Nightly", "monitor_check_type": PEP, "status": "active",
                                    "schedule": "weekdays", f"config.{PEP}.search_type": "broad_search"})
    assert r.status_code == 302
    (m,) = tenant.api.get(f"/programs/{p['uuid']}/monitors").get_json()["data"]
    assert (m["schedule"], m["config"]["search_type"]) == ("weekdays", "broad_search")
    assert "Nightly" in admin.get(page).get_data(as_text=True)
    assert admin.post(f"/monitors/{m['uuid']}/edit", {"monitor_name": "Nightly PEP", "schedule": "monday",
                                                     f"config.{PEP}.search_type": "narrow_search"}).status_code == 302
    shown = tenant.api.get(f"/monitors/{m['uuid']}").get_json()["data"]
    assert (shown["monitor_name"], shown["schedule"], shown["config"]["search_type"]) == \
        ("Nightly PEP", "monday", "narrow_search")
    admin.post(f"/monitors/{m['uuid']}/status", {"status": "paused"})
    assert tenant.api.get(f"/monitors/{m['uuid']}").get_json()["data"]["status"] == "paused"
    admin.post(f"/monitors/{m['uuid']}/delete")
    assert tenant.api.get(f"/monitors/{m['uuid']}").status_code == 404
    assert "Restore" in admin.get(page).get_data(as_text=True)
    assert admin.post(f"/monitors/{m['uuid']}/restore").status_code == 302
    assert tenant.api.get(f"/monitors/{m['uuid']}").status_code == 200


def test_a_viewer_sees_monitors_but_cannot_write(app, tenant, viewer):
    p = tenant.program()
    m = tenant.api.post(f"/programs/{p['uuid']}/monitors", json={
        "monitor_name": "Nightly", "monitor_check_type": PEP, "status": "active", "schedule": "manual"}).get_json()
    uuid = m["data"]["uuid"]
    body = viewer.get(f"/monitors/{uuid}").get_data(as_text=True)
    assert "Nightly" in body and "Run now" not in body
    assert viewer.post(f"/monitors/{uuid}/run", {"mode": "all"}).status_code == 403
    assert viewer.post(f"/monitors/{uuid}/delete").status_code == 403
