"""Issue 24 §3: a development SECRET_KEY is warned about loudly and refused in production; cookies are Secure
whenever the public URL is https."""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from app import InsecureConfiguration, create_app
from app.config import DEV_SECRET_KEY, TestConfig, is_production

ROOT = Path(__file__).resolve().parents[2]


def _config(database_url, **overrides) -> dict:
    base = {k: getattr(TestConfig, k) for k in dir(TestConfig) if k.isupper()}
    return {**base, "SQLALCHEMY_DATABASE_URI": database_url, "REDIS_URL": None, "RATELIMIT_STORAGE_URI": "memory://",
            **overrides}


@pytest.mark.parametrize("settings,production", [
    ({"APP_ENV": "production"}, True),
    ({"PUBLIC_BASE_URL": "https://screening.example.com"}, True),
    ({"PUBLIC_BASE_URL": "http://10.0.0.5:8000"}, True),
    ({"APP_ENV": "development", "PUBLIC_BASE_URL": "https://screening.example.com"}, False),
    ({"PUBLIC_BASE_URL": "http://localhost:5000"}, False),
    ({"PUBLIC_BASE_URL": "http://127.0.0.1:5000/"}, False),
    ({}, False),
])
def test_how_production_is_recognised(settings, production):
    assert is_production(settings) is production


@pytest.mark.parametrize("key", [None, "", DEV_SECRET_KEY])
def test_production_refuses_to_start_with_the_development_secret_key(database_url, key):
    for where in ({"APP_ENV": "production"}, {"PUBLIC_BASE_URL": "https://screening.example.com"}):
        with pytest.raises(InsecureConfiguration, match="without a SECRET_KEY of its own"):
            create_app(_config(database_url, SECRET_KEY=key, TESTING=False, **where))
    app = create_app(_config(database_url, SECRET_KEY="s" * 48, TESTING=False, APP_ENV="production"))
    assert app.config["SECRET_KEY"] == "s" * 48


def test_outside_production_the_development_key_is_warned_about_loudly(database_url, caplog):
    with caplog.at_level(logging.WARNING, logger="app.config"):
        create_app(_config(database_url, SECRET_KEY=DEV_SECRET_KEY, TESTING=False))
    assert any("SECRET_KEY is the development value" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.config"):
        create_app(_config(database_url, SECRET_KEY=DEV_SECRET_KEY, TESTING=False, DEBUG=True))  # flask --debug
        create_app(_config(database_url, SECRET_KEY="s" * 48, TESTING=False))
    assert not any("SECRET_KEY" in r.getMessage() for r in caplog.records)


def test_cookies_are_secure_whenever_the_public_url_is_https(app, database_url, factory):
    tenant = factory.tenant()
    secure = create_app(_config(database_url, PUBLIC_BASE_URL="https://screening.example.com"))
    plain = create_app(_config(database_url, PUBLIC_BASE_URL="http://localhost:5000"))
    assert (secure.config["SESSION_COOKIE_SECURE"], secure.config["REMEMBER_COOKIE_SECURE"]) == (True, True)
    assert (plain.config["SESSION_COOKIE_SECURE"], plain.config["REMEMBER_COOKIE_SECURE"]) == (False, False)
    from tests.factories import csrf_from
    client = secure.test_client()
    token = csrf_from(client.get("/login", base_url="https://screening.example.com").get_data(as_text=True))
    r = client.post("/login", base_url="https://screening.example.com",
                    headers={"Referer": "https://screening.example.com/login"}, data={
        "email": tenant.email, "password": tenant.password, "csrf_token": token, "remember": "y"})
    assert r.status_code == 302
    cookies = r.headers.getlist("Set-Cookie")
    assert {c.split("=", 1)[0] for c in cookies} >= {"session", "remember_token"}, cookies
    assert all("; Secure" in c for c in cookies), cookies


def _processes_with(marker: str) -> list[int]:
    """Processes whose environment holds `marker` (what a run started, wherever its session went)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in open(f"/proc/{entry}/environ", "rb").read():
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_make_run_warns_when_secret_key_is_not_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "REDIS_URL")}
    env["DATABASE_URL"] = f"sqlite:///{tmp_path}/make-run-warning-test.db"
    proc = subprocess.Popen(["bash", "scripts/run.sh", "0"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        lines = [proc.stderr.readline() for _ in range(3)]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.time() + 10
        while proc.poll() is None and time.time() < deadline:
            time.sleep(0.1)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert lines[0].startswith("!!!!") and "SECRET_KEY is not set" in lines[1], lines
    # stopped while it was still starting, the script must not go on to start the web server in its own session
    deadline = time.time() + 10
    while _processes_with(env["DATABASE_URL"]) and time.time() < deadline:
        time.sleep(0.2)
    left = _processes_with(env["DATABASE_URL"])
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "processes of the stopped `make run` still running"
