"""Entities in the portal: list filters/sort/search/pages with htmx swaps, forms per type with the API's
validation, archive and delete with confirmation, CSV import with a per-row report."""
import io

from tests.portal.conftest import text, uuid_in


def _names(html: str, names) -> list[str]:
    return [n for n in names if n in html]


def test_program_page_lists_entities_with_filters(admin, tenant):
    p = tenant.program()
    tenant.entity(p["uuid"], first_name="Alice", last_name="Pep", risk_level="high", flags=["pep"],
                  reference_number="REF-1")
    tenant.entity(p["uuid"], first_name="Bob", last_name="Plain", risk_level="low")
    tenant.api.post(f"/programs/{p['uuid']}/entities", json={"entity_type": "business", "business_name": "Acme Pty"})
    base = f"/programs/{p['uuid']}"
    everyone = ("Alice Pep", "Bob Plain", "Acme Pty")
    assert _names(text(admin.get(base)), everyone) == list(everyone)
    assert _names(text(admin.get(base + "?type=business")), everyone) == ["Acme Pty"]
    assert _names(text(admin.get(base + "?risk=high")), everyone) == ["Alice Pep"]
    assert _names(text(admin.get(base + "?flag=pep")), everyone) == ["Alice Pep"]
    assert _names(text(admin.get(base + "?q=plain")), everyone) == ["Bob Plain"]
    assert _names(text(admin.get(base + "?q=REF-1")), everyone) == ["Alice Pep"]


def test_sort_pagination_and_htmx_fragment(admin, tenant):
    p = tenant.program()
    for last in ("Charlie", "Alpha", "Bravo"):
        tenant.entity(p["uuid"], first_name="Zed", last_name=last)
    base = f"/programs/{p['uuid']}"
    html = text(admin.get(base + "?sort=entity_name&per_page=2"))
    assert "Zed Alpha" in html and "Zed Bravo" in html and "Zed Charlie" not in html
    assert html.index("Zed Alpha") < html.index("Zed Bravo")
    assert "1–2 of 3 entities" in html and "page=2" in html
    r = admin.htmx_get(base + "?sort=entity_name&per_page=2&page=2")
    frag = text(r)
    assert r.status_code == 200 and "<html" not in frag and "Zed Charlie" in frag and "Zed Alpha" not in frag
    assert 'hx-push-url="true"' in frag  # links keep the URL in sync
    assert 'id="entity-sort" hx-swap-oob="true"' in frag and 'value="entity_name"' in frag


def test_archived_entities_hidden_by_default(admin, tenant):
    p = tenant.program()
    kept = tenant.entity(p["uuid"], first_name="Kept", last_name="One")
    old = tenant.entity(p["uuid"], first_name="Archived", last_name="One")
    tenant.api.post(f"/entities/{old['uuid']}/archive")
    base = f"/programs/{p['uuid']}"
    assert "Kept One" in text(admin.get(base)) and "Archived One" not in text(admin.get(base))
    html = text(admin.get(base + "?archived=true"))
    assert "Archived One" in html and "Kept One" not in html
    html = text(admin.get(base + "?archived=all"))
    assert "Archived One" in html and "Kept One" in html
    assert kept


def test_detail_page(admin, tenant):
    p = tenant.program(program_name="Retail")
    e = tenant.entity(p["uuid"], first_name="Jane", last_name="Citizen", phone1="+61293744000",
                      address_country="au", flags=["sanction"], reference_number="C-9")
    html = text(admin.get(f"/entities/{e['uuid']}"))
    assert "Jane Citizen" in html and "C-9" in html and e["entity_number"] in html
    assert "+61 2 9374 4000" in html and "Sanction" in html and "Retail" in html


def test_create_individual_and_business(admin, tenant):
    p = tenant.program(default_risk_level="medium")
    form = text(admin.get(f"/programs/{p['uuid']}/entities/new"))
    assert 'name="first_name"' in form and 'name="business_name"' not in form
    assert '<option selected value="medium">' in form or 'value="medium" selected' in form
    r = admin.post(f"/programs/{p['uuid']}/entities/new", {
        "entity_type": "individual", "first_name": "Jane", "last_name": "Citizen", "birth_date": "1980-02-01",
        "risk_level": "high", "flags": ["pep", "fraud"], "address_country": "AU", "address_state": "nsw"})
    assert r.status_code == 302
    e = tenant.api.get(f"/entities/{uuid_in(r.headers['Location'])}").get_json()["data"]
    assert (e["entity_name"], e["birth_date"], e["risk_level"], e["address_state"]) == \
        ("Jane Citizen", "1980-02-01", "high", "NSW")
    assert e["flags"] == ["pep", "fraud"]
    form = text(admin.get(f"/programs/{p['uuid']}/entities/new?entity_type=business"))
    assert 'name="business_name"' in form and 'name="first_name"' not in form
    r = admin.post(f"/programs/{p['uuid']}/entities/new", {
        "entity_type": "business", "business_name": "Acme Pty Ltd", "business_number_type": "au_abn",
        "business_number": "51 824 753 556", "risk_level": ""})
    assert r.status_code == 302
    e = tenant.api.get(f"/entities/{uuid_in(r.headers['Location'])}").get_json()["data"]
    assert (e["business_number"], e["risk_level"]) == ("51824753556", None)


def test_create_shows_field_errors_from_the_schema(admin, tenant):
    p = tenant.program()
    r = admin.post(f"/programs/{p['uuid']}/entities/new", {
        "entity_type": "individual", "first_name": "Only", "birth_date": "2999-01-01", "email1": "nope",
        "phone1": "12", "address_country": "ZZ"})
    html = text(r)
    assert r.status_code == 422
    for field in ("birth_date", "email1", "phone1", "address_country"):
        assert f'id="{field}-error"' in html, field
    assert 'id="last_name-error"' not in html  # a first name alone is enough (mononyms)
    assert "Must not be in the future." in html
    assert 'value="Only"' in html
    assert tenant.api.get(f"/programs/{p['uuid']}/entities").get_json()["meta"]["total"] == 0


def test_business_number_checksum_error(admin, tenant):
    p = tenant.program()
    r = admin.post(f"/programs/{p['uuid']}/entities/new", {
        "entity_type": "business", "business_name": "Acme", "business_number_type": "au_abn",
        "business_number": "51824753557"})
    assert r.status_code == 422 and 'id="business_number-error"' in text(r) and "checksum" in text(r)


def test_duplicate_reference_number_lands_on_the_field(admin, tenant):
    p = tenant.program()
    tenant.entity(p["uuid"], reference_number="DUP-1")
    r = admin.post(f"/programs/{p['uuid']}/entities/new", {
        "entity_type": "individual", "first_name": "A", "last_name": "B", "reference_number": "DUP-1"})
    assert r.status_code == 422
    assert 'id="reference_number-error"' in text(r) and "Already used" in text(r)


def test_type_switch_keeps_typed_values_as_htmx_fragment(admin, tenant):
    p = tenant.program()
    r = admin.htmx_get(f"/programs/{p['uuid']}/entities/new?entity_type=business&keep=1&reference_number=R-7"
                       "&first_name=Jane")
    html = text(r)
    assert r.status_code == 200 and "<html" not in html
    assert 'name="business_name"' in html and 'value="R-7"' in html and 'name="first_name"' not in html


def test_edit_entity(admin, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"], first_name="Jane", last_name="Doe")
    html = text(admin.get(f"/entities/{e['uuid']}/edit"))
    assert 'value="Jane"' in html and "cannot change after creation" in html
    r = admin.post(f"/entities/{e['uuid']}/edit", {"first_name": "Janet", "last_name": "Doe", "risk_level": "low",
                                                   "email1": "janet@example.com"})
    assert r.status_code == 302
    data = tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]
    assert (data["entity_name"], data["email1"]) == ("Janet Doe", "janet@example.com")
    r = admin.post(f"/entities/{e['uuid']}/edit", {"first_name": "", "last_name": ""})
    assert r.status_code == 422 and 'id="first_name-error"' in text(r) and 'id="last_name-error"' in text(r)


def test_archive_with_confirmation(admin, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"])
    assert "Archive “" in text(admin.get(f"/entities/{e['uuid']}/archive"))
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["archived_at"] is None
    r = admin.post(f"/entities/{e['uuid']}/archive")
    assert r.status_code == 302
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["archived_at"] is not None
    html = text(admin.get(f"/entities/{e['uuid']}"))
    assert "read-only" in html and f"/entities/{e['uuid']}/edit" not in html
    assert admin.get(f"/entities/{e['uuid']}/edit").status_code == 302


def test_delete_with_confirmation(admin, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"])
    assert "Delete “" in text(admin.get(f"/entities/{e['uuid']}/delete"))
    r = admin.post(f"/entities/{e['uuid']}/delete")
    assert r.status_code == 302 and p["uuid"] in r.headers["Location"]
    assert tenant.api.get(f"/entities/{e['uuid']}").status_code == 404


def test_viewer_cannot_write_entities(viewer, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"])
    html = text(viewer.get(f"/entities/{e['uuid']}"))
    assert f"/entities/{e['uuid']}/edit" not in html and f"/entities/{e['uuid']}/delete" not in html
    assert 'name="note_text"' not in html
    for url in (f"/programs/{p['uuid']}/entities/new", f"/entities/{e['uuid']}/edit",
                f"/entities/{e['uuid']}/archive", f"/entities/{e['uuid']}/delete",
                f"/programs/{p['uuid']}/entities/import"):
        assert viewer.post(url, {"first_name": "X", "last_name": "Y", "entity_type": "individual"}).status_code == 403, url
    assert tenant.api.get(f"/entities/{e['uuid']}").get_json()["data"]["archived_at"] is None


def _upload(client, program_uuid, content: str, name="people.csv"):
    return client.post(f"/programs/{program_uuid}/entities/import",
                       {"file": (io.BytesIO(content.encode()), name)}, content_type="multipart/form-data")


def test_csv_import_creates_every_row(analyst, tenant):
    p = tenant.program()
    csv_text = ("entity_type,first_name,last_name,business_name,flags,reference_number\n"
                "individual,Ann,Lee,,pep;fraud,A-1\n"
                "business,,,Acme Pty,,A-2\n")
    r = _upload(analyst, p["uuid"], csv_text)
    assert r.status_code == 302
    assert "Imported 2 entities" in text(analyst.get(r.headers["Location"]))
    data = tenant.api.get(f"/programs/{p['uuid']}/entities?sort=entity_name").get_json()["data"]
    assert [d["entity_name"] for d in data] == ["Acme Pty", "Ann Lee"]


def test_csv_import_reports_each_bad_row_and_imports_nothing(admin, tenant):
    p = tenant.program()
    csv_text = ("entity_type,first_name,last_name,birth_date\n"
                "individual,Ann,Lee,1990-01-01\n"
                "individual,,,19-01-01\n"
                "alien,X,Y,\n")
    r = _upload(admin, p["uuid"], csv_text)
    html = text(r)
    assert r.status_code == 422
    assert "Nothing was imported" in html and 'data-testid="import-errors"' in html
    assert ("<tr><td>3</td><td>first_name</td><td>Give a first name or a last name (a person known by a single "
            "name needs only one).</td></tr>") in html
    assert "<tr><td>3</td><td>birth_date</td>" in html and "<tr><td>4</td><td>entity_type</td>" in html
    assert tenant.api.get(f"/programs/{p['uuid']}/entities").get_json()["meta"]["total"] == 0


def test_csv_import_file_problems(admin, tenant):
    p = tenant.program()
    r = admin.post(f"/programs/{p['uuid']}/entities/import", {}, content_type="multipart/form-data")
    assert r.status_code == 422 and "Choose a CSV file" in text(r)
    r = _upload(admin, p["uuid"], "colour\nred\n")
    assert r.status_code == 422 and "Unknown column." in text(r)
    r = admin.post(f"/programs/{p['uuid']}/entities/import",
                   {"file": (io.BytesIO(b"entity_type\n\xff\xfe"), "x.csv")}, content_type="multipart/form-data")
    assert r.status_code == 422 and "UTF-8" in text(r)


def test_csv_template_download(admin):
    r = admin.get("/entities/import-template.csv")
    assert r.status_code == 200 and r.mimetype == "text/csv"
    header = text(r).strip().split(",")
    assert header[0] == "entity_type" and "first_name" in header and "flags" in header
    assert "attachment" in r.headers["Content-Disposition"]


def test_another_accounts_entity_is_404(admin, other_tenant):
    p = other_tenant.program()
    e = other_tenant.entity(p["uuid"])
    assert admin.get(f"/entities/{e['uuid']}").status_code == 404
    assert admin.post(f"/entities/{e['uuid']}/delete").status_code == 404
    assert other_tenant.api.get(f"/entities/{e['uuid']}").status_code == 200
