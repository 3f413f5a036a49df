from tests.portal.conftest import text

def test_smoke(admin, tenant):
    p = tenant.program(program_name="Retail")
    e = tenant.entity(p["uuid"])
    for url in ["/", "/programs", "/programs/new", f"/programs/{p['uuid']}", f"/programs/{p['uuid']}/edit",
                f"/programs/{p['uuid']}/delete", f"/programs/{p['uuid']}/entities/new",
                f"/programs/{p['uuid']}/entities/new?entity_type=business", f"/programs/{p['uuid']}/entities/import",
                f"/entities/{e['uuid']}", f"/entities/{e['uuid']}/edit", f"/entities/{e['uuid']}/archive",
                f"/entities/{e['uuid']}/delete", "/deleted", "/admin/users", "/admin/api-keys", "/api/docs",
                "/entities/import-template.csv"]:
        r = admin.get(url)
        assert r.status_code == 200, (url, text(r)[:3000])
