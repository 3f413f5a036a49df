"""Size limits (issue 7 §4): 413 with the standard error body, decided before the body is read."""
from __future__ import annotations

import io
import json



def auth(tenant) -> dict:
    return {"Authorization": f"Bearer {tenant.api.secret}"}


def test_json_body_over_the_limit(app, tenant):
    big = json.dumps({"program_name": "x" * (1024 * 1024 + 10)})
    r = tenant.api.client.post("/api/v1/programs", data=big, content_type="application/json",
                               headers=auth(tenant))
    assert r.status_code == 413
    body = r.get_json()
    assert "at most 1 MiB" in body["message"] and body["api_reference"] == r.headers["X-Request-Id"]
    assert tenant.api.get("/programs").get_json()["meta"]["total"] == 0


def test_the_limit_is_decided_on_content_length_without_reading(app, tenant):
    """A request announcing 50 MB but sending almost nothing is refused from its header alone."""
    class Trickle(io.RawIOBase):
        read_calls = 0

        def readable(self):
            return True

        def readinto(self, b):
            Trickle.read_calls += 1
            b[:1] = b"{"
            return 1

    environ = {"CONTENT_LENGTH": str(50 * 1024 * 1024), "CONTENT_TYPE": "application/json",
               "wsgi.input": Trickle()}
    r = tenant.api.client.post("/api/v1/programs", environ_overrides=environ, headers=auth(tenant))
    assert r.status_code == 413
    assert Trickle.read_calls == 0


def test_chunked_body_without_length_is_cut_off(app, tenant):
    big = b'{"program_name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    # as gunicorn passes a chunked body: no Content-Length, the input marked as terminated
    r = tenant.api.client.post("/api/v1/programs", input_stream=io.BytesIO(big),
                               headers={**auth(tenant), "Content-Type": "application/json",
                                        "Transfer-Encoding": "chunked"},
                               environ_overrides={"wsgi.input_terminated": True})
    assert r.status_code == 413
    small = b'{"program_name": "Chunked"}'
    r = tenant.api.client.post("/api/v1/programs", input_stream=io.BytesIO(small),
                               headers={**auth(tenant), "Content-Type": "application/json",
                                        "Transfer-Encoding": "chunked"},
                               environ_overrides={"wsgi.input_terminated": True})
    assert r.status_code == 201, r.get_json()


def test_csv_upload_limits(app, tenant):
    program = tenant.program()
    url = f"/api/v1/programs/{program['uuid']}/entities/bulk"
    header = b"entity_type,first_name,last_name\n"
    # under 10 MiB is accepted by size (a 2 MiB file would be refused by the JSON limit)
    row = b"individual,Ada,Lovelace\n"
    app.config["CSV_MAX_ROWS"] = 100
    try:
        r = tenant.api.client.post(url, data=header + row * 101, content_type="text/csv", headers=auth(tenant))
        assert r.status_code == 413 and "more than 100 rows" in r.get_json()["message"]
    finally:
        app.config["CSV_MAX_ROWS"] = 50_000
    huge = header + b"individual,Ada,Lovelace" + b"x" * (10 * 1024 * 1024) + b"\n"
    r = tenant.api.client.post(url, data={"file": (io.BytesIO(huge), "big.csv")}, headers=auth(tenant),
                               content_type="multipart/form-data")
    assert r.status_code == 413 and "at most 10 MiB" in r.get_json()["message"]
    medium = header + (b"individual,Ada,Lovelace%d\n" * 1) * 1 + b"#" * 0
    r = tenant.api.client.post(url, data={"file": (io.BytesIO(medium), "ok.csv")}, headers=auth(tenant),
                               content_type="multipart/form-data")
    assert r.status_code == 201, r.get_json()


def test_csv_endpoint_takes_more_than_the_json_limit(app, tenant, work):
    program = tenant.program()
    rows = b"".join(b"individual,%s%d,Lovelace\n" % (b"A" * 200, i) for i in range(5_000))
    assert len(rows) > 1024 * 1024
    r = tenant.api.client.post(f"/api/v1/programs/{program['uuid']}/entities/bulk",
                               data=b"entity_type,first_name,last_name\n" + rows,
                               content_type="text/csv", headers=auth(tenant))
    # 5,000 rows are imported by a heavy job (issue 24): accepted whole, then imported
    assert r.status_code == 202, (r.status_code, r.get_data(as_text=True)[:300])
    work()
    job = tenant.api.get(r.headers["Location"]).get_json()["data"]
    assert job["status"] == "complete" and job["result"]["created_count"] == 5_000


def test_portal_upload_over_the_limit_reads_as_a_page(app, tenant, factory):
    from tests.factories import csrf_from
    program = tenant.program()
    client = factory.login(tenant.email)
    page = client.get(f"/programs/{program['uuid']}/entities/import")
    assert page.status_code == 200
    assert "50,000 rows and 10 MiB" in page.get_data(as_text=True)
    token = csrf_from(page.get_data(as_text=True))
    huge = b"entity_type,first_name,last_name\n" + b"individual,Ada,Lovelace\n" * 500_000
    r = client.post(f"/programs/{program['uuid']}/entities/import",
                    data={"csrf_token": token, "file": (io.BytesIO(huge), "big.csv")},
                    content_type="multipart/form-data")
    assert r.status_code == 413
    text = r.get_data(as_text=True)
    assert "The file is too large: at most 10 MiB" in text and "Split the file" in text
    form = client.post("/programs", data={"csrf_token": token, "program_name": "x" * (1024 * 1024 + 1)})
    assert form.status_code == 413 and "request body is too large" in form.get_data(as_text=True)
