"""Redis outages, the health endpoint and the API's rate-limit budget.

The outage tests point an app (on the suite's PostgreSQL database) at a Redis port where nothing listens, or
at a real redis-server started here and then stopped and started again."""
from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import time
import uuid
from contextlib import contextmanager

import pytest
from sqlalchemy import func, select

from tests.factories import ApiClient, csrf_from


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _keep_login_limiter():
    """Flask-Limiter's Limiter is one object per process and init_app re-binds its storage: put it back."""
    from app.extensions import limiter
    saved = dict(limiter.__dict__)
    try:
        yield
    finally:
        limiter.__dict__.clear()
        limiter.__dict__.update(saved)


@contextmanager
def app_with_redis(app, redis_url: str, **config):
    from app import create_app
    with _keep_login_limiter():
        other = create_app({**{k: v for k, v in app.config.items() if k.isupper()},
                            "REDIS_URL": redis_url, "RATELIMIT_STORAGE_URI": redis_url, **config})
        try:
            yield other
        finally:
            from app.extensions import db
            with other.app_context():
                db.engine.dispose()


@pytest.fixture
def dead_redis_url():
    return f"redis://127.0.0.1:{_free_port()}/0"


# A job and a route that enqueues it inside a write, like a check launch does.
from app.jobs import job  # noqa: E402


@job("maintenance")
def _noop_job(program_id: int) -> None:
    return None


def _add_enqueue_route(flask_app) -> None:
    from flask import g

    from app.api.base import authenticate, rate_limit
    from app.core.transactions import commit
    from app.programs.services import create_program

    def launch():
        rate_limit()
        authenticate()
        program = create_program(g.actor, {"program_name": "Needs a job"})
        _noop_job.enqueue(program.id)
        commit()
        return {"data": {"uuid": str(program.uuid)}}, 202

    from app.extensions import csrf
    flask_app.add_url_rule("/api/v1/_test/launch", "test_launch", csrf.exempt(launch), methods=["POST"])


def _program_count(flask_app) -> int:
    from app.extensions import db
    from app.programs.models import Program
    with flask_app.app_context():
        return db.session.scalar(select(func.count()).select_from(Program))


# ------------------------------------------------------------------ Redis down

def test_api_and_portal_keep_serving_with_redis_down(app, tenant, dead_redis_url, caplog):
    with app_with_redis(app, dead_redis_url) as degraded:
        api = ApiClient(degraded, tenant.api_key)
        caplog.set_level(logging.WARNING)
        codes = []
        program = api.post("/programs", json={"program_name": "Outage"})
        codes.append(program.status_code)
        program_uuid = program.get_json()["data"]["uuid"]
        entity = api.post(f"/programs/{program_uuid}/entities",
                          json={"entity_type": "individual", "first_name": "Ada", "last_name": "Lovelace"})
        codes.append(entity.status_code)
        entity_uuid = entity.get_json()["data"]["uuid"]
        codes.append(api.post(f"/entities/{entity_uuid}/notes", json={"note_text": "Seen during the outage"}).status_code)
        codes.append(api.patch(f"/programs/{program_uuid}", json={"program_name": "Outage 2"}).status_code)
        for _ in range(40):
            for path in ("/programs", f"/programs/{program_uuid}/entities", f"/entities/{entity_uuid}", "/notes"):
                response = api.get(path)
                codes.append(response.status_code)
                assert "RateLimit-Limit" not in response.headers  # no budget counted: the limiter is open
        assert set(codes) <= {200, 201}, codes
        assert len(codes) == 164

        # one warning for the whole outage, not one per request
        outage = [r for r in caplog.records if "rate-limit storage unreachable" in r.getMessage()]
        assert len(outage) == 1

        # the portal: login and pages
        client = degraded.test_client()
        token = csrf_from(client.get("/login").get_data(as_text=True))
        login = client.post("/login", data={"email": tenant.email, "password": tenant.password, "csrf_token": token})
        assert login.status_code == 302, login.get_data(as_text=True)[:300]
        for page in ("/", "/programs", f"/entities/{entity_uuid}"):
            assert client.get(page).status_code == 200, page

        health = degraded.test_client().get("/healthz")
        assert health.status_code == 200
        assert health.get_json() == {"database": "ok", "redis": "down"}


def test_work_that_needs_a_job_answers_503_and_writes_nothing(app, tenant, dead_redis_url):
    with app_with_redis(app, dead_redis_url) as degraded:
        _add_enqueue_route(degraded)
        before = _program_count(degraded)
        response = ApiClient(degraded, tenant.api_key).post("/api/v1/_test/launch", json={})
        assert response.status_code == 503, response.get_data(as_text=True)
        assert int(response.headers["Retry-After"]) > 0
        body = response.get_json()
        assert "nothing was saved" in body["message"] and body["api_reference"]
        assert _program_count(degraded) == before


@pytest.mark.integration
def test_everything_resumes_when_redis_comes_back(app, tenant):
    server = shutil.which("redis-server")
    assert server, "redis-server is needed for this test"
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"

    def start():
        proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                 "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        from redis import Redis
        for _ in range(100):
            try:
                if Redis.from_url(url).ping():
                    return proc
            except Exception:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    proc = start()
    try:
        with app_with_redis(app, url) as live:
            _add_enqueue_route(live)
            api = ApiClient(live, tenant.api_key)
            client = live.test_client()
            assert api.get("/programs").headers["RateLimit-Limit"] == "600"
            assert api.post("/api/v1/_test/launch", json={}).status_code == 202
            assert client.get("/healthz").get_json()["redis"] == "ok"
            from redis import Redis
            queue_key = f"rq:queue:{live.config['RQ_QUEUE_PREFIX']}maintenance"
            assert Redis.from_url(url).llen(queue_key) == 1

            proc.terminate()
            proc.wait(timeout=10)
            assert api.get("/programs").status_code == 200
            assert api.post("/api/v1/_test/launch", json={}).status_code == 503
            assert client.get("/healthz").get_json() == {"database": "ok", "redis": "down"}

            proc = start()  # same port, no restart of the app
            deadline = time.monotonic() + 10
            while "RateLimit-Limit" not in api.get("/programs").headers:
                assert time.monotonic() < deadline, "the rate limiter did not resume"
                time.sleep(0.2)
            assert client.get("/healthz").get_json() == {"database": "ok", "redis": "ok"}
            assert api.post("/api/v1/_test/launch", json={}).status_code == 202
            # this Redis keeps nothing on disk: the queue holds the job queued after the outage, and none
            # for the launch refused during it
            assert Redis.from_url(url).llen(queue_key) == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_healthz_answers_503_when_the_database_is_down(app, redis_url):
    from app import create_app
    with _keep_login_limiter():
        down = create_app({**{k: v for k, v in app.config.items() if k.isupper()},
                           "SQLALCHEMY_DATABASE_URI": f"postgresql+psycopg://postgres@127.0.0.1:{_free_port()}/x"})
        response = down.test_client().get("/healthz")
    assert response.status_code == 503
    assert response.get_json() == {"database": "down", "redis": "ok"}
    assert response.headers["Cache-Control"] == "no-store"


def test_healthz_needs_no_authentication(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.get_json() == {"database": "ok", "redis": "ok"}


def test_the_scheduler_warns_when_the_database_runs_without_autovacuum(app):
    """Stale planner statistics made reads by uuid 100x slower in the 10-minute load run (docs/performance.md)."""
    from sqlalchemy import text
    from app.extensions import db
    from app.health import database_warnings
    with app.app_context():
        setting = db.session.execute(text("SHOW autovacuum")).scalar()
        warnings = database_warnings()
    assert len(warnings) == (setting != "on")
    assert all("autovacuum is off" in w and "docs/operations.md" in w for w in warnings)


# ------------------------------------------------------------------ rate limits

def _set_limit(app, tenant, per_minute):
    from app.accounts.models import Account
    from app.core.transactions import commit
    from app.extensions import db
    with app.app_context():
        db.session.get(Account, tenant.account_id).rate_limit_per_minute = per_minute
        commit()


def test_one_budget_per_key_across_all_endpoints(app, tenant):
    _set_limit(app, tenant, 6)
    program = tenant.program()  # 1
    paths = ["/programs", f"/programs/{program['uuid']}/entities", f"/programs/{program['uuid']}", "/openapi.json",
             "/notes"]
    responses = [tenant.api.get(p) for p in paths]  # 2..6
    assert [r.status_code for r in responses] == [200] * 5
    assert [r.headers["RateLimit-Remaining"] for r in responses] == ["4", "3", "2", "1", "0"]
    limited = tenant.api.get("/programs")
    assert limited.status_code == 429
    assert limited.get_json()["api_reference"] == limited.headers["X-Request-Id"]


def test_rate_limit_headers_follow_the_ietf_draft(app, tenant):
    ok = tenant.api.get("/programs")
    assert ok.headers["RateLimit-Limit"] == "600"
    assert ok.headers["RateLimit-Remaining"] == "599"
    assert 1 <= int(ok.headers["RateLimit-Reset"]) <= 60  # seconds until the window resets, not an epoch
    assert "Retry-After" not in ok.headers
    errors = [tenant.api.get("/programs/" + str(uuid.uuid4())), tenant.api.post("/programs", json={})]
    assert [e.status_code for e in errors] == [404, 400]
    assert all("RateLimit-Remaining" in e.headers and "Retry-After" not in e.headers for e in errors)


def test_budget_is_shared_by_every_web_worker(app, tenant, redis_url):
    """Two app instances (two gunicorn workers, two hosts) spend one budget through Redis."""
    _set_limit(app, tenant, 4)
    with app_with_redis(app, redis_url) as second:
        other = ApiClient(second, tenant.api_key)
        codes = [c.get("/programs").status_code for c in (tenant.api, other, tenant.api, other, other)]
    assert codes == [200, 200, 200, 200, 429]


def test_unauthenticated_requests_spend_the_address_budget(app, client):
    app.config["DEFAULT_API_RATE_LIMIT"] = 3
    try:
        codes = [client.get("/api/v1/programs", headers={"Authorization": "Bearer nope"}).status_code
                 for _ in range(4)]
    finally:
        app.config["DEFAULT_API_RATE_LIMIT"] = 600
    assert codes == [401, 401, 401, 429]


def test_set_rate_limit_cli(app, tenant):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["accounts", "set-rate-limit", "--account", tenant.account_uuid, "--per-minute", "2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["effective_per_minute"] == 2
    assert [tenant.api.get("/programs").status_code for _ in range(3)] == [200, 200, 429]
    bad = runner.invoke(args=["accounts", "set-rate-limit", "--account", tenant.account_uuid, "--per-minute", "0"])
    assert bad.exit_code == 2 and "per_minute" in bad.output
    back = runner.invoke(args=["accounts", "set-rate-limit", "--account", tenant.account_uuid, "--default"])
    assert json.loads(back.output) == {"account_uuid": tenant.account_uuid, "rate_limit_per_minute": None,
                                       "effective_per_minute": 600}
    from app.accounts.models import AuditLog
    from app.extensions import db
    with app.app_context():
        actions = db.session.scalars(select(AuditLog.action).where(AuditLog.action == "account.rate_limit_changed"))
        assert len(list(actions)) == 2


def test_admin_can_lower_the_rate_limit_in_the_portal(app, tenant, factory):
    from tests.portal.conftest import PortalClient
    client = factory.login(tenant.email)
    portal = PortalClient(client, tenant.email)
    page = portal.get("/admin/api-keys").get_data(as_text=True)
    assert "600</strong> requests a minute" in page
    too_high = portal.post("/admin/api-keys/rate-limit", data={"per_minute": "abc"})
    assert too_high.status_code == 422 and "is not a whole number" in too_high.get_data(as_text=True)
    saved = portal.post("/admin/api-keys/rate-limit", data={"per_minute": "2"})
    assert saved.status_code == 302
    assert [tenant.api.get("/programs").status_code for _ in range(3)] == [200, 200, 429]
    assert "2</strong> requests a minute" in portal.get("/admin/api-keys").get_data(as_text=True)
    above = portal.post("/admin/api-keys/rate-limit", data={"per_minute": "100000"})  # only an operator raises it
    assert above.status_code == 422 and "from 1 to 600" in above.get_data(as_text=True)
    assert "2</strong> requests a minute" in portal.get("/admin/api-keys").get_data(as_text=True)
    portal.post("/admin/api-keys/rate-limit", data={"per_minute": ""})  # empty: the default again
    assert "600</strong> requests a minute" in portal.get("/admin/api-keys").get_data(as_text=True)


def test_api_responses_are_not_cached_or_sniffed(tenant):
    for response in (tenant.api.get("/programs"), tenant.api.get("/programs/" + str(uuid.uuid4()))):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Cache-Control"] == "no-store"


# ------------------------------------------------------------------ make run after a Redis outage

def _http(base: str, method: str, path: str, key: str | None = None, body: dict | None = None):
    """(status, headers, JSON body) of one request to a running server."""
    import urllib.error
    import urllib.request
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, json.loads(exc.read() or b"null")
    except OSError:
        return None, {}, None


def _until(seconds: float, what: str, probe) -> None:
    deadline = time.monotonic() + seconds
    while not probe():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} seconds"
        time.sleep(0.5)


@pytest.mark.integration
def test_make_run_takes_up_its_work_again_within_30_seconds_of_redis_returning(tmp_path):
    """`scripts/run.sh` (what `make run` starts) on SQLite and a private redis-server, stopped for longer than a
    minute (the worker's reconnection back-off once grew to a minute; the scheduler wakes and fails meanwhile),
    then started again: jobs run, the scheduler is back and ticks, and the API's limits apply, with no restart."""
    import os
    import signal
    from pathlib import Path

    from redis import Redis
    root = Path(__file__).resolve().parents[2]
    server = shutil.which("redis-server")
    assert server, "redis-server is needed for this test"
    redis_port, web_port = _free_port(), _free_port()
    redis_url, base = f"redis://127.0.0.1:{redis_port}/0", f"http://127.0.0.1:{web_port}"

    def start_redis():
        proc = subprocess.Popen([server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        _until(10, "redis-server starts", lambda: _pings(redis_url))
        return proc

    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/screening.db", "REDIS_URL": redis_url,
           "SCREENING_INDEX_DIR": str(tmp_path / "index"), "FLASK_APP": "wsgi.py", "MAIL_OUTBOX_DIR": str(tmp_path)}
    flask = [str(root / ".venv/bin/flask")]
    redis_proc = start_redis()
    web = None
    try:
        subprocess.run(flask + ["db", "upgrade"], cwd=root, env=env, check=True, capture_output=True)
        seeded = subprocess.run(flask + ["accounts", "seed-demo"], cwd=root, env=env, check=True,
                                capture_output=True, text=True)
        key = json.loads(seeded.stdout)["api_key"]
        log = open(tmp_path / "run.log", "wb")
        web = subprocess.Popen(["bash", "scripts/run.sh", str(web_port)], cwd=root, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
        _until(60, "make run serves", lambda: (_http(base, "GET", "/healthz")[2] or {}).get("redis") == "ok")

        def a_check_completes() -> bool:
            status, _, launch = _http(base, "POST", "/api/v1/adhoc-checks", key,
                                      {"check_types": ["phone_check"], "data": {"phone": "+61 412 345 678"}})
            if status != 202:
                return False
            uuid_ = launch["data"]["uuid"]
            try:
                _until(20, "the check completes", lambda: (_http(base, "GET", f"/api/v1/adhoc-checks/{uuid_}", key)[2]
                                                           or {}).get("data", {}).get("status") == "complete")
            except AssertionError:
                return False
            return True

        _until(60, "a check completes before the outage", a_check_completes)

        redis_proc.terminate()
        redis_proc.wait(10)
        time.sleep(70)  # the outage: longer than the scheduler's sleep and the worker's old back-off
        assert "RateLimit-Limit" not in _http(base, "GET", "/api/v1/programs", key)[1]  # the limiter is open
        redis_proc = start_redis()

        returned = time.monotonic()
        _until(30, "the API's limits apply",
               lambda: "RateLimit-Limit" in _http(base, "GET", "/api/v1/programs", key)[1])
        _until(30 - (time.monotonic() - returned), "a job runs", a_check_completes)
        from rq.cron import CronScheduler
        connection = Redis.from_url(redis_url)
        _until(30 - (time.monotonic() - returned), "the scheduler is back",
               lambda: bool(CronScheduler.all(connection)))
        # and it ticks: the recovery sweep, due every minute, is enqueued at once by a scheduler that starts (RQ's
        # history of that cron job, by the name the job registry gives it)
        from rq.cron import get_cron_job_history_key
        _until(75, "the scheduler ticks",
               lambda: connection.zcard(get_cron_job_history_key("recover_lost_work")) > 0)
    finally:
        if web is not None and web.poll() is None:
            os.killpg(web.pid, signal.SIGTERM)
            web.wait(30)
        redis_proc.terminate()
        redis_proc.wait(10)


def _pings(url: str) -> bool:
    from redis import Redis
    try:
        return bool(Redis.from_url(url, socket_connect_timeout=0.5).ping())
    except Exception:
        return False
