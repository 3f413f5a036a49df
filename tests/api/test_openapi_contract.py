"""The OpenAPI document is the contract (issue 7 §6): schemathesis 4 runs against a live server (gunicorn on the
suite's PostgreSQL and Redis) with the conformance checks and the stateful links, and must find nothing."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,"
          "response_headers_conformance")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_server(app, database_url, redis_url):
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url, "FLASK_APP": "wsgi.py",
           "DEFAULT_API_RATE_LIMIT": "1000000", "RQ_QUEUE_PREFIX": app.config["RQ_QUEUE_PREFIX"],
           "SECRET_KEY": "contract-test"}
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    proc = subprocess.Popen([gunicorn, "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                             "wsgi:app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    yield base
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    errors = proc.stderr.read().decode()
    assert "Traceback" not in errors, errors[-4000:]


@pytest.mark.integration
def test_schemathesis_finds_nothing(live_server, tenant):
    st = shutil.which("st", path=str(Path(sys.executable).parent))
    assert st, "schemathesis is a test dependency (pip install -e '.[dev]')"
    started = time.monotonic()
    result = subprocess.run(
        [st, "run", f"{live_server}/api/v1/openapi.json", "-H", f"Authorization: Bearer {tenant.api_key}",
         "--checks", CHECKS, "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", "20",
         "--workers", "1", "--seed", "20261123", "--no-color"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    output = result.stdout + result.stderr
    seconds = time.monotonic() - started
    summary = [line for line in output.splitlines() if "generated" in line or "Operations:" in line]
    print(f"schemathesis: {seconds:.0f} s; " + " | ".join(s.strip() for s in summary))
    assert result.returncode == 0, output[-6000:]
    assert " passed" in output and "failures" not in output.split("SUMMARY")[-1], output[-3000:]
