"""Heavy work off the request path (issue 24): large imports, PDFs and exports are jobs with a status resource,
a rendered PDF is cached by its content, and only the owning account sees a job."""
from __future__ import annotations

import csv
import io
import time
import uuid

from sqlalchemy import func, select

from tests.heavy.conftest import csv_rows


def bulk(tenant, program_uuid: str, body: bytes, **kw):
    return tenant.api.client.post(f"/api/v1/programs/{program_uuid}/entities/bulk", data=body,
                                  content_type="text/csv",
                                  headers={"Authorization": f"Bearer {tenant.api_key}", **kw.pop("headers", {})})


def entity_count(app, program_uuid: str) -> int:
    from app.entities.models import Entity
    from app.extensions import db
    from app.programs.models import Program
    with app.app_context():
        pid = db.session.scalar(select(Program.id).where(Program.uuid == uuid.UUID(program_uuid)))
        return db.session.scalar(select(func.count(Entity.id)).where(Entity.program_id == pid))


def job_row(app, job_uuid: str):
    from app.extensions import db
    from app.heavy.models import HeavyJob
    with app.app_context():
        job = db.session.scalar(select(HeavyJob).where(HeavyJob.uuid == uuid.UUID(job_uuid)))
        db.session.expunge(job)
        return job


def test_a_large_import_is_a_job_with_a_status_resource(app, tenant, work, settings):
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    r = bulk(tenant, program["uuid"], csv_rows(40))
    assert r.status_code == 202, r.get_json()
    job = r.get_json()["data"]
    assert r.headers["Location"] == f"/api/v1/jobs/{job['uuid']}"
    assert job["kind"] == "entity_import" and job["status"] == "queued" and job["progress"] == 0
    assert job["result_url"] is None and job["target_uuid"] == program["uuid"]
    assert entity_count(app, program["uuid"]) == 0  # nothing imported in the request
    work()
    done = tenant.api.get(r.headers["Location"]).get_json()["data"]
    assert done["status"] == "complete" and done["progress"] == 100 and done["attempts"] == 1
    assert done["result"] == {"program_uuid": program["uuid"], "created_count": 40}
    assert done["started_at"] and done["finished_at"] and done["expires_at"]
    result = tenant.api.get(done["result_url"])
    assert result.status_code == 200 and result.mimetype == "application/json"
    body = result.get_json()
    assert body["created_count"] == 40 and len(body["entity_uuids"]) == 40
    assert entity_count(app, program["uuid"]) == 40
    assert job_row(app, job["uuid"]).input_key is None  # the uploaded file is deleted once imported


def test_a_failed_import_job_reports_every_bad_row_and_creates_nothing(app, tenant, work, settings):
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    r = bulk(tenant, program["uuid"], csv_rows(30, bad_line=7))
    assert r.status_code == 202
    work()
    job = tenant.api.get(r.headers["Location"]).get_json()["data"]
    assert job["status"] == "failed" and "nothing was imported" in job["message"]
    assert list(job["errors"]) == ["rows.7.entity_type"]
    assert job["result_url"] is None
    assert tenant.api.get(f"/jobs/{job['uuid']}/result").status_code == 409
    assert entity_count(app, program["uuid"]) == 0


def test_the_request_still_refuses_what_it_can_see_at_once(tenant, settings):
    """A header error, too many rows (413) and an unknown program answer as before, without a job."""
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    bad_header = b"entity_type,first_name,colour\n" + b"individual,Ava,red\n" * 40
    r = bulk(tenant, program["uuid"], bad_header)
    assert r.status_code == 400 and "rows.1.colour" in r.get_json()["errors"]
    assert bulk(tenant, str(uuid.uuid4()), csv_rows(40)).status_code == 404


def test_small_cases_stay_synchronous(app, tenant, screened, settings):
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    r = bulk(tenant, program["uuid"], csv_rows(10))
    assert r.status_code == 201 and r.get_json()["data"]["created_count"] == 10
    checks = tenant.api.get(f"/entities/{screened['entity']['uuid']}/checks").get_json()["data"]
    pdf = tenant.api.get(f"/checks/{checks[0]['uuid']}/pdf")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"


def test_a_large_history_pdf_is_a_job_and_its_pdf_is_cached_until_the_data_changes(app, tenant, factory, screened,
                                                                                       work, settings):
    settings(HEAVY_PDF_SYNC_ITEMS=0)
    client = factory.login(tenant.email)
    url = f"/entities/{screened['entity']['uuid']}/history.pdf"
    first = client.get(url)
    assert first.status_code == 303 and "/jobs/" in first.headers["Location"]
    again = client.get(url)  # the same person asks again while it waits: the same job
    assert again.headers["Location"] == first.headers["Location"]
    page = client.get(first.headers["Location"])
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and 'hx-trigger="load delay:1s"' in text and "Waiting for a worker" in text
    work()
    fragment = client.get(first.headers["Location"], headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "hx-trigger" not in fragment and "Download history-" in fragment  # polling stops, the file is offered
    job_uuid = first.headers["Location"].rsplit("/", 1)[1]
    pdf = client.get(f"/jobs/{job_uuid}/download")
    assert pdf.status_code == 200 and pdf.data.startswith(b"%PDF") and "history-" in pdf.headers["Content-Disposition"]
    rendered = job_row(app, job_uuid)
    assert rendered.result == {"cached": False, "bytes": len(pdf.data)}

    # unchanged data: the next request serves the stored file (no rendering)
    second = client.get(url)
    work()
    hit = job_row(app, second.headers["Location"].rsplit("/", 1)[1])
    assert hit.result == {"cached": True} and hit.result_key == rendered.result_key
    assert hit.cache_key == rendered.cache_key
    assert client.get(f"/jobs/{hit.uuid}/download").data == pdf.data

    # the data changes (a note on the entity): the next request renders again
    r = tenant.api.post(f"/entities/{screened['entity']['uuid']}/notes", json={"note_text": "Passport seen."})
    assert r.status_code == 201
    third = client.get(url)
    work()
    miss = job_row(app, third.headers["Location"].rsplit("/", 1)[1])
    assert miss.result["cached"] is False and miss.cache_key != rendered.cache_key
    assert miss.result_key != rendered.result_key


def test_the_api_check_pdf_answers_202_when_large(app, tenant, screened, work, settings):
    settings(HEAVY_PDF_SYNC_ITEMS=0)
    check = tenant.api.get(f"/entities/{screened['entity']['uuid']}/checks").get_json()["data"][0]
    r = tenant.api.get(f"/checks/{check['uuid']}/pdf")
    assert r.status_code == 202 and r.get_json()["data"]["kind"] == "check_pdf"
    status = tenant.api.get(r.headers["Location"]).get_json()["data"]
    assert status["status"] == "queued"
    work()
    status = tenant.api.get(r.headers["Location"]).get_json()["data"]
    assert status["status"] == "complete"
    pdf = tenant.api.get(status["result_url"])
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf" and pdf.data.startswith(b"%PDF")


def test_jobs_results_and_errors_are_seen_by_their_account_only(app, tenant, other_tenant, factory, work, settings):
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    ok = bulk(tenant, program["uuid"], csv_rows(20)).get_json()["data"]["uuid"]
    bad = bulk(tenant, program["uuid"], csv_rows(20, seed="b", bad_line=3)).get_json()["data"]["uuid"]
    work()
    for job_uuid in (ok, bad):
        assert tenant.api.get(f"/jobs/{job_uuid}").status_code == 200
        assert other_tenant.api.get(f"/jobs/{job_uuid}").status_code == 404
        assert other_tenant.api.get(f"/jobs/{job_uuid}/result").status_code == 404
    stranger = factory.login(other_tenant.email)
    assert stranger.get(f"/jobs/{ok}").status_code == 404
    assert stranger.get(f"/jobs/{ok}/download").status_code == 404
    assert stranger.get(f"/jobs/{bad}").status_code == 404
    owner = factory.login(tenant.email)
    assert owner.get(f"/jobs/{ok}/download").status_code == 200
    assert "rows.3.entity_type" in owner.get(f"/jobs/{bad}").get_data(as_text=True)


def test_a_large_portal_import_shows_its_progress_page(app, tenant, factory, work, settings):
    from tests.factories import csrf_from
    settings(HEAVY_IMPORT_SYNC_ROWS=10)
    program = tenant.program()
    client = factory.login(tenant.email)
    page = client.get(f"/programs/{program['uuid']}/entities/import")
    token = csrf_from(page.get_data(as_text=True))
    r = client.post(f"/programs/{program['uuid']}/entities/import",
                    data={"csrf_token": token, "file": (io.BytesIO(csv_rows(25)), "people.csv")},
                    content_type="multipart/form-data")
    assert r.status_code == 303 and "/jobs/" in r.headers["Location"]
    assert "Entity import" in client.get(r.headers["Location"]).get_data(as_text=True)
    work()
    done = client.get(r.headers["Location"]).get_data(as_text=True)
    assert "25 entities imported" in done
    assert entity_count(app, program["uuid"]) == 25


def test_a_large_events_export_is_a_job(app, tenant, factory, screened, work, settings):
    settings(HEAVY_EXPORT_SYNC_ROWS=0)
    client = factory.login(tenant.email)
    r = client.get("/events/export.csv?status=all")
    assert r.status_code == 303
    work()
    job_uuid = r.headers["Location"].rsplit("/", 1)[1]
    csv_file = client.get(f"/jobs/{job_uuid}/download")
    assert csv_file.status_code == 200 and csv_file.mimetype == "text/csv"
    lines = list(csv.reader(io.StringIO(csv_file.get_data(as_text=True))))
    assert lines[0][0] == "event_number" and len(lines) == 1 + job_row(app, job_uuid).result["rows"] >= 2
    settings(HEAVY_EXPORT_SYNC_ROWS=2000)
    streamed = client.get("/events/export.csv?status=all")
    assert streamed.status_code == 200 and list(csv.reader(io.StringIO(streamed.get_data(as_text=True)))) == lines


def test_without_redis_jobs_run_in_process(app, tenant, settings):
    """`make run` without REDIS_URL: a large import still becomes a job, run on the web process's thread pool."""
    settings(HEAVY_IMPORT_SYNC_ROWS=10, REDIS_URL=None)
    program = tenant.program()
    r = bulk(tenant, program["uuid"], csv_rows(30))
    assert r.status_code == 202
    deadline = time.time() + 30
    while time.time() < deadline:
        status = tenant.api.get(r.headers["Location"]).get_json()["data"]["status"]
        if status in ("complete", "failed"):
            break
        time.sleep(0.2)
    assert status == "complete" and entity_count(app, program["uuid"]) == 30
