#!/usr/bin/env python3
"""IDPass web figures (issue 20): the hosted pages' response times and the certificate's.

    python bench/idpass_web.py [--idpasses 40] [--database postgresql+psycopg://postgres@127.0.0.1:5432/idpass_bench]

On a fresh PostgreSQL database (dropped and created) with Redis for the rate limits: launches IDPasses through the
API, then times, per IDPass, each hosted page a person loads (the welcome page, the consent page, the document
choice, the confirm page after a passport photo) and the actions between them (start, consent, choose), through the
app's WSGI stack in this process (Flask's test client: no network, no gunicorn). Then closes them with a
document photo and a selfie stored, and times the certificate: its issue in the background when the IDPass ends (the
`pdf` queue's job, run here in this process: rendered with the images, stored), the first download after it and
the next ones (served as stored), and the first download of an IDPass whose job has not run (rendered on demand,
as when no worker is running). Prints p50/p95/max; writes nothing else.
"""
from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import subprocess
import time

from _venv import ROOT  # noqa: F401,E402 (first: re-runs with .venv/bin/python)


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def line(name, values):
    ms = [v * 1000 for v in values]
    print(f"| {name} | {len(ms)} | {statistics.median(ms):.1f} | {pct(ms, 95):.1f} | {max(ms):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--idpasses", type=int, default=40)
    parser.add_argument("--database", default="postgresql+psycopg://postgres@127.0.0.1:5432/idpass_bench")
    parser.add_argument("--redis-db", type=int, default=9)
    args = parser.parse_args()
    name = args.database.rsplit("/", 1)[1]
    subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-c", f"DROP DATABASE IF EXISTS {name}",
                    "-c", f"CREATE DATABASE {name}"], check=True)
    import tempfile
    blobs = tempfile.mkdtemp(prefix="idpass-bench-")
    os.environ.update(DATABASE_URL=args.database, REDIS_URL=f"redis://127.0.0.1:6379/{args.redis_db}",
                      STORAGE_PATH=blobs, SMS_OUTBOX_DIR=blobs + "/sms", HOSTED_RATE_LIMIT="100000 per minute")
    from flask_migrate import upgrade

    from app import create_app
    from app.accounts.models import Account
    from app.accounts.services import add_dvs_identity, cli_actor
    from app.billing import services as billing
    from app.core.transactions import commit
    from app.core.uploads import clean_image
    from app.extensions import db
    from app.idpass import images, services
    from app.idpass.queries import get_idpass
    from tests.factories import csrf_from
    from tests.idpass.images import face, passport_jpeg

    app = create_app()
    with app.app_context():
        upgrade()
        opened = billing.open_account(name="Bench Bank", email="bench@example.com", password="bench-password-1",
                                      credit=1_000_000)
        account = db.session.scalar(db.select(Account).where(Account.uuid == opened["account_uuid"]))
        actor = cli_actor(account)
        add_dvs_identity(actor, oac_code="OAC1", requester_name="Bench Bank",
                         privacy_policy_url="https://bank.example.test/privacy")
        commit()
        from app.programs.services import create_program
        from app.entities.services import create_entity
        program = create_program(actor, {"program_name": "Bench", "status": "active"})
        commit()
        entity = create_entity(actor, program.uuid, {"entity_type": "individual", "first_name": "Harriet",
                                                     "last_name": "Wombatson", "birth_date": "1990-02-14"})
        commit()
        body = {"data": {}, "config": {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport"],
                                       "require_id_photo": False, "return_verification_images": True,
                                       "delivery_method": "manual"}}
        launched = []
        for _ in range(args.idpasses):
            p = services.launch_for_entity(actor, entity.uuid, body)
            commit()
            launched.append((p.uuid, "/v/" + p.link_token))

    photo = passport_jpeg()
    timings: dict[str, list[float]] = {k: [] for k in (
        "GET welcome", "POST start", "GET consent", "POST consent", "GET choose document", "POST choose",
        "GET photo page", "GET confirm page (after the MRZ read)")}
    upload_times = []

    def timed(key, fn):
        t = time.perf_counter()
        r = fn()
        timings[key].append(time.perf_counter() - t)
        assert r.status_code in (200, 303), (key, r.status_code, r.get_data(as_text=True)[:200])
        return r

    for uuid, link in launched:
        c = app.test_client()
        html = timed("GET welcome", lambda: c.get(link)).get_data(as_text=True)
        token = csrf_from(html)
        timed("POST start", lambda: c.post(link + "/start", data={"csrf_token": token}))
        timed("GET consent", lambda: c.get(link))
        timed("POST consent", lambda: c.post(link + "/consent", data={"csrf_token": token, "agree": "yes"}))
        timed("GET choose document", lambda: c.get(link))
        timed("POST choose", lambda: c.post(link + "/document_1/type",
                                            data={"csrf_token": token, "document_type": "passport"}))
        timed("GET photo page", lambda: c.get(link))
        t = time.perf_counter()
        c.post(link + "/document_1/photo", data={"csrf_token": token, "photo": (io.BytesIO(photo), "p.jpg")},
               content_type="multipart/form-data")
        upload_times.append(time.perf_counter() - t)
        timed("GET confirm page (after the MRZ read)", lambda: c.get(link))

    first, again = [], []
    selfie = clean_image(face("obama.jpg"))
    with app.app_context():
        for uuid, _link in launched:
            p = get_idpass(actor, uuid)
            images.store(p, "selfie", selfie)
            p.document_summary = {**p.document_summary, "document_1": {
                **p.document_summary.get("document_1", {}), "status": "verified", "fields": {"last_name": "Wombatson"},
                "face": {"compared": True, "similarity": 0.9, "threshold": 0.54, "matched": True}}}
            services.close(p, "complete", "passed", [], "Bench.")
            commit()
        from app import reports
        background, on_demand = [], []
        for i, (uuid, _link) in enumerate(launched):
            if i % 2:  # no worker ran: the first download renders it
                t = time.perf_counter()
                reports.idpass_certificate(actor, uuid)
                commit()
                on_demand.append(time.perf_counter() - t)
                continue
            t = time.perf_counter()
            reports.issue_idpass_certificate(get_idpass(actor, uuid).id)  # the pdf queue's job, as a worker runs it
            background.append(time.perf_counter() - t)
            t = time.perf_counter()
            reports.idpass_certificate(actor, uuid)
            commit()
            first.append(time.perf_counter() - t)
            t = time.perf_counter()
            reports.idpass_certificate(actor, uuid)
            commit()
            again.append(time.perf_counter() - t)

    print(f"# IDPass web figures ({platform.node()}, {os.cpu_count()} cores, {args.idpasses} IDPasses, "
          "PostgreSQL, Flask test client in one process)\n")
    print("| what | n | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|")
    for key, values in timings.items():
        line(key, values)
    line("POST passport photo (clean, encrypt, store, MRZ read)", upload_times)
    line("certificate, issued in the background when the IDPass ends (pdf queue: render, store)", background)
    line("certificate, first download after that (stored file)", first)
    line("certificate, later downloads (stored file)", again)
    line("certificate, first download when no worker ran (render on demand)", on_demand)


if __name__ == "__main__":
    main()
