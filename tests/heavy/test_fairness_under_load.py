"""Issue 24's figure at a lowered scale, on the stack as production runs it (gunicorn 2 workers x 4 threads, a
light RQ worker, two heavy workers at a lower CPU priority, real PostgreSQL and Redis): while account B floods
history PDFs from the portal and large CSV imports from the API, account A's `GET /api/v1/events` keeps p95
<= 300 ms and p99 <= 1 s (a coarse bound the issue asks for; the full-scale figures: bench/fairshare.py and
docs/performance.md)."""
from __future__ import annotations

import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.heavy.conftest import csv_rows, save_lists

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def _login(base: str, email: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60, follow_redirects=False)
    page = client.get("/login").text
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    r = client.post("/login", data={"email": email, "password": password, "csrf_token": token})
    assert r.status_code == 302, r.text[:300]
    return client


def test_a_tenant_stays_fast_while_another_floods_heavy_work(app, factory, work, tmp_path):
    save_lists(app)
    a, b = factory.tenant(name="Alpha"), factory.tenant(name="Beta")
    pa = a.program()
    ea = a.entity(pa["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    assert a.api.post(f"/entities/{ea['uuid']}/checks", json={"check_types": ["pep_sanction_check"]}).status_code == 202
    pb = b.program()
    eb = b.entity(pb["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    for _ in range(8):
        assert b.api.post(f"/entities/{eb['uuid']}/checks",
                          json={"check_types": ["pep_sanction_check"]}).status_code == 202
    work()

    port = _free_port()
    env = {**os.environ, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"], "REDIS_URL": app.config["REDIS_URL"],
           "RQ_QUEUE_PREFIX": app.config["RQ_QUEUE_PREFIX"], "FLASK_APP": "wsgi.py",
           "SECRET_KEY": app.config["SECRET_KEY"], "STORAGE_PATH": app.config["STORAGE_PATH"],
           "RATELIMIT_KEY_PREFIX": "fairload", "SCREENING_INDEX_DIR": str(tmp_path / "index"),
           "HEAVY_PDF_SYNC_ITEMS": "0", "HEAVY_IMPORT_SYNC_ROWS": "100", "HEAVY_SLOTS": "2"}
    bin_ = ROOT / ".venv" / "bin"
    commands = {"web": [str(bin_ / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                        "wsgi:app"],
                "light": [sys.executable, "-m", "flask", "jobs", "worker", "--light"],
                "heavy-1": [sys.executable, "-m", "flask", "jobs", "worker", "--heavy"],
                "heavy-2": [sys.executable, "-m", "flask", "jobs", "worker", "--heavy"]}
    procs = {name: subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=open(tmp_path / f"{name}.log", "wb"),
                                    stderr=subprocess.STDOUT, start_new_session=True)
             for name, cmd in commands.items()}
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.time() < deadline, (tmp_path / "web.log").read_text()[-2000:]
            time.sleep(0.3)
        a_api = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {a.api_key}"}, timeout=60)
        b_api = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {b.api_key}"}, timeout=60)
        sessions = [_login(base, b.email, b.password) for _ in range(2)]
        for _ in range(10):  # warm both web workers
            assert a_api.get("/events?per_page=30").status_code == 200

        samples: list[tuple[float, int]] = []
        stop = threading.Event()

        def poll_a() -> None:
            while not stop.is_set():
                t = time.perf_counter()
                status = a_api.get("/events?per_page=30").status_code
                samples.append(((time.perf_counter() - t) * 1000, status))
                time.sleep(0.05)  # B's jobs may end in 2 s: enough samples of A meanwhile

        poller = threading.Thread(target=poll_a)
        poller.start()
        with ThreadPoolExecutor(8) as pool:
            pdfs = [pool.submit(sessions[i % 2].get, f"/entities/{eb['uuid']}/history.pdf") for i in range(6)]
            imports = [pool.submit(b_api.post, f"/programs/{pb['uuid']}/entities/bulk",
                                   content=csv_rows(3000, seed=f"i{i}"), headers={"Content-Type": "text/csv"})
                       for i in range(2)]
            answers = [f.result() for f in pdfs + imports]
        assert [r.status_code for r in answers] == [303] * 6 + [202] * 2, [r.status_code for r in answers]
        jobs = {r.headers["Location"].rsplit("/", 1)[1] for r in answers}
        assert len(jobs) == 3  # six clicks on one report by one person: one job
        deadline = time.time() + 45
        while time.time() < deadline:  # A is timed until every one of B's jobs has ended
            states = {b_api.get(f"/jobs/{j}").json()["data"]["status"] for j in jobs}
            if states <= {"complete", "failed"}:
                break
            time.sleep(0.5)
        stop.set()
        poller.join()
        assert states == {"complete"}, states
    finally:
        for proc in procs.values():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(10)
    times = [ms for ms, _ in samples]
    assert all(status == 200 for _, status in samples), [s for _, s in samples if s != 200][:5]
    p95, p99 = _pct(times, 95), _pct(times, 99)
    print(f"A during B's flood: {len(times)} requests, p50 {statistics.median(times):.0f} ms, p95 {p95:.0f} ms, "
          f"p99 {p99:.0f} ms")
    assert len(times) >= 20
    assert p95 <= 300 and p99 <= 1000, (p95, p99)
