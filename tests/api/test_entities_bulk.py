"""POST /programs/{program_uuid}/entities/bulk: a CSV file, all rows or none."""
import io
import uuid

import pytest
from sqlalchemy import func, select

GOOD = (
    "entity_type,first_name,last_name,business_name,business_number_type,business_number,vessel_name,"
    "reference_number,address_country,phone1,email1,flags,risk_level\n"
    "individual,Ann,Lee,,,,,C-1,au,0412 345 678,ann@example.com,PEP; fraud,\n"
    "Business,,,Acme Pty Ltd,au_abn,51 824 753 556,,C-2,,,,,High\n"
    "vessel,,,,,,Sea Spirit,,,,,,\n"
)


def upload(tenant, program_uuid, text, headers=None, as_file=False, raw=None):
    path = f"/programs/{program_uuid}/entities/bulk"
    if as_file:
        data = {"file": (io.BytesIO(raw if raw is not None else text.encode()), "entities.csv")}
        return tenant.api.post(path, data=data, headers=headers, content_type="multipart/form-data")
    return tenant.api.post(path, data=raw if raw is not None else text.encode(),
                           headers={"Content-Type": "text/csv", **(headers or {})})


def entities_of(tenant, program_uuid, query="?sort=created_at"):
    r = tenant.api.get(f"/programs/{program_uuid}/entities{query}")
    return r.get_json()["data"]


def entity_count(app, program_uuid):
    from app.entities.models import Entity
    from app.extensions import db
    from app.programs.models import Program
    with app.app_context():
        return db.session.scalar(select(func.count(Entity.id)).join(Program, Program.id == Entity.program_id)
                                 .where(Program.uuid == uuid.UUID(program_uuid)))


@pytest.fixture
def program(tenant):
    return tenant.program(default_risk_level=None)


def test_text_csv_body_creates_every_row(app, tenant, program):
    r = upload(tenant, program["uuid"], GOOD)
    assert r.status_code == 201, r.get_json()
    data = r.get_json()["data"]
    assert data["program_uuid"] == program["uuid"] and data["created_count"] == 3
    created = entities_of(tenant, program["uuid"])
    assert [e["uuid"] for e in created] == data["entity_uuids"]  # in file order
    ann, acme, vessel = created
    assert ann["entity_name"] == "Ann Lee" and ann["flags"] == ["pep", "fraud"]
    assert ann["phone1"] == "+61412345678" and ann["address_country"] == "AU" and ann["reference_number"] == "C-1"
    assert acme["entity_type"] == "business" and acme["business_number"] == "51824753556"
    assert acme["risk_level"] == "high"
    # the program has no default risk: bulk rows get low
    assert ann["risk_level"] == "low" and vessel["risk_level"] == "low"
    assert vessel["entity_name"] == "Sea Spirit" and vessel["reference_number"] is None


def test_program_default_risk_applies_to_rows_without_one(tenant):
    program = tenant.program(default_risk_level="medium")
    assert upload(tenant, program["uuid"], GOOD).status_code == 201
    assert [e["risk_level"] for e in entities_of(tenant, program["uuid"])] == ["medium", "high", "medium"]


def test_multipart_file_field(tenant, program):
    r = upload(tenant, program["uuid"], "\ufeffentity_type,property_name\nproperty,1 Main St\n", as_file=True)
    assert r.status_code == 201 and r.get_json()["data"]["created_count"] == 1
    assert entities_of(tenant, program["uuid"])[0]["property_name"] == "1 Main St"


def test_one_bad_row_creates_nothing_and_names_line_and_field(app, tenant, program):
    text = GOOD + "individual,Bob,Ray,,,,,,,,not-an-email,,\n"
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 400
    assert r.get_json()["errors"] == {"rows.5.email1": [r.get_json()["errors"]["rows.5.email1"][0]]}
    assert "nothing was imported" in r.get_json()["message"]
    assert entity_count(app, program["uuid"]) == 0


def test_every_bad_row_is_reported_with_its_file_line(app, tenant, program):
    text = ("entity_type,first_name,last_name,vessel_name,birth_date,flags,risk_level\n"
            "individual,,,,,,\n"                             # line 2: no name at all
            'individual,"Multi\nLine",Lee,,1980-13-01,,\n'   # lines 3-4: a line break in a name
            "vessel,,,,,,\n"                                 # line 5: no vessel name
            "planet,,,,,,\n"                                 # line 6: unknown type
            "vessel,,,V,,sanction;nope,extreme\n"            # line 7: bad flag and risk
            "individual,Ok,Person,,,,\n")                    # line 8: fine
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 400
    errors = r.get_json()["errors"]
    assert set(errors) == {"rows.2.first_name", "rows.2.last_name", "rows.3.first_name", "rows.5.vessel_name", "rows.6.entity_type",
                           "rows.7.flags.1", "rows.7.risk_level"}
    assert "errors in 5 rows;" in r.get_json()["message"]
    assert entity_count(app, program["uuid"]) == 0


def test_type_specific_columns_must_be_empty_for_other_types(tenant, program):
    text = "entity_type,first_name,last_name,vessel_name\nindividual,Ann,Lee,Boaty\n"
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 400 and list(r.get_json()["errors"]) == ["rows.2.vessel_name"]


def test_header_problems_are_line_1(tenant, program):
    r = upload(tenant, program["uuid"], "entity_type,first_name,colour\nindividual,Ann,red\n")
    assert r.status_code == 400 and r.get_json()["errors"] == {"rows.1.colour": ["Unknown column."]}
    r = upload(tenant, program["uuid"], "first_name,last_name\nAnn,Lee\n")
    assert r.status_code == 400 and "rows.1.entity_type" in r.get_json()["errors"]


def test_rows_with_extra_cells_are_reported(tenant, program):
    r = upload(tenant, program["uuid"], "entity_type,vessel_name\nvessel,V,surplus\nvessel,\n")
    assert r.status_code == 400
    assert set(r.get_json()["errors"]) == {"rows.2", "rows.3.vessel_name"}


@pytest.mark.parametrize("raw,as_file", [(b"", False), (b"entity_type,vessel_name\n", False),
                                         (b"entity_type,vessel_name\nvessel,\xff\xfe\n", False),
                                         (b"entity_type,vessel_name\nvessel,\xe9t\xe9\n", True)])
def test_unusable_files_are_400_on_file(app, tenant, program, raw, as_file):
    r = upload(tenant, program["uuid"], None, raw=raw, as_file=as_file)
    assert r.status_code == 400 and "file" in r.get_json()["errors"]
    assert entity_count(app, program["uuid"]) == 0


def test_missing_file_is_400_and_json_is_415(tenant, program):
    path = f"/programs/{program['uuid']}/entities/bulk"
    r = tenant.api.post(path, json={"entity_type": "vessel"})
    assert r.status_code == 415 and "text/csv" in r.get_json()["message"]
    r = tenant.api.post(path, data={"other": (io.BytesIO(b"x"), "x.csv")}, content_type="multipart/form-data")
    assert r.status_code == 400 and "file" in r.get_json()["errors"]


def test_reference_repeated_in_the_file_is_409(app, tenant, program):
    text = "entity_type,vessel_name,reference_number\nvessel,A,R-1\nvessel,B,R-2\nvessel,C,R-1\n"
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 409
    assert "line 4" in r.get_json()["message"] and "line 2" in r.get_json()["message"]
    assert entity_count(app, program["uuid"]) == 0


def test_reference_already_used_in_the_program_is_409(app, tenant, program):
    tenant.entity(program["uuid"], reference_number="R-2")
    deleted = tenant.entity(program["uuid"], reference_number="R-3")
    tenant.api.delete(f"/entities/{deleted['uuid']}")
    text = "entity_type,vessel_name,reference_number\nvessel,A,R-1\nvessel,B,R-2\n"
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 409 and "line 3" in r.get_json()["message"] and "R-2" in r.get_json()["message"]
    assert len(entities_of(tenant, program["uuid"])) == 1
    # a deleted entity's reference is free again
    r = upload(tenant, program["uuid"], "entity_type,vessel_name,reference_number\nvessel,A,R-3\n")
    assert r.status_code == 201


def test_validation_errors_come_before_reference_conflicts(tenant, program):
    text = "entity_type,vessel_name,reference_number\nvessel,A,R-1\nvessel,,R-1\n"
    r = upload(tenant, program["uuid"], text)
    assert r.status_code == 400 and list(r.get_json()["errors"]) == ["rows.3.vessel_name"]


def test_archived_program_is_409_and_unknown_program_404(tenant, program):
    tenant.api.patch(f"/programs/{program['uuid']}", json={"status": "archived"})
    assert upload(tenant, program["uuid"], GOOD).status_code == 409
    assert upload(tenant, str(uuid.uuid4()), GOOD).status_code == 404


def test_bulk_import_is_audited(app, tenant, program):
    from app.accounts.models import AuditLog
    from app.extensions import db
    r = upload(tenant, program["uuid"], GOOD)
    uuids = {uuid.UUID(u) for u in r.get_json()["data"]["entity_uuids"]}
    with app.app_context():
        rows = list(db.session.scalars(select(AuditLog).order_by(AuditLog.id)))
        created = [row for row in rows if row.action == "entity.imported"]
        assert {row.target_uuid for row in created} == uuids
        assert all(row.changes["source"] == "bulk_import" for row in created)
        [summary] = [row for row in rows if row.action == "entity.bulk_imported"]
        assert summary.target_uuid == uuid.UUID(program["uuid"]) and summary.changes == {"created_count": 3}
        assert summary.api_reference == r.get_json()["api_reference"]


def test_idempotency_replay_and_key_reuse(app, tenant, program):
    h = {"Idempotency-Key": "bulk-1"}
    r1 = upload(tenant, program["uuid"], GOOD, headers=h)
    r2 = upload(tenant, program["uuid"], GOOD, headers=h)
    assert r1.status_code == r2.status_code == 201 and r2.headers["Idempotent-Replay"] == "true"
    assert r2.get_json() == r1.get_json()
    assert entity_count(app, program["uuid"]) == 3
    r3 = upload(tenant, program["uuid"], GOOD.replace("Sea Spirit", "Other"), headers=h)
    assert r3.status_code == 422
    assert entity_count(app, program["uuid"]) == 3


def test_service_takes_plain_text(app, tenant, program):
    from app.core.actor import Actor
    from app.core.transactions import commit
    from app.entities import services
    actor = Actor(account_id=tenant.account_id, kind="user", id=None, uuid=uuid.uuid4(), name="u", role="analyst",
                  via="portal")
    with app.app_context():
        created = services.bulk_import(actor, uuid.UUID(program["uuid"]), "entity_type,vessel_name\nvessel,X\n")
        commit()
        assert [e.vessel_name for e in created] == ["X"] and created[0].risk_level == "low"
    assert entity_count(app, program["uuid"]) == 1


def test_multipart_retry_with_the_same_key_replays(app, tenant, program):
    """A multipart body's boundary differs on every send; the fingerprint uses the file content instead."""
    h = {"Idempotency-Key": "bulk-multipart"}
    first = upload(tenant, program["uuid"], GOOD, headers=h, as_file=True)
    again = upload(tenant, program["uuid"], GOOD, headers=h, as_file=True)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replay"] == "true" and again.get_json() == first.get_json()
    assert entity_count(app, program["uuid"]) == 3
    other = upload(tenant, program["uuid"], GOOD.replace("C-1", "C-9"), headers=h, as_file=True)
    assert other.status_code == 422


def test_bulk_upload_documented_in_openapi(client):
    op = client.get("/api/v1/openapi.json").get_json()["paths"]["/programs/{program_uuid}/entities/bulk"]["post"]
    assert set(op["requestBody"]["content"]) == {"multipart/form-data", "text/csv"}
