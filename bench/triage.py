#!/usr/bin/env python3
"""Triage timing: N events reviewed by keyboard in a real browser (Debian's Chromium through Playwright), the way
an analyst works the inbox: `j` to the next event, then `d` (dismiss) and the row updates in place.

    python bench/triage.py [--events 100] [--mode keys|page]

`keys`: in the inbox, each event is dismissed with one key, waiting for its row to show the new status (the
server round trip included) before the next key. `page`: each event is opened (`Enter`), decided with `d` on the
event page, which opens the next event of the filter. The app runs as in production (gunicorn 2x4, 2 RQ workers
for the checks that raise the events) on its own PostgreSQL database and Redis db 14. Prints seconds per event;
writes nothing into the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path

from _venv import HERE, ROOT  # noqa: E402,F401 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402
import psycopg  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop  # noqa: E402
from checks import start_stack  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"
REDIS = "redis://127.0.0.1:6379/14"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def raise_events(client: httpx.Client, n: int) -> None:
    """N sandbox entities whose adverse-media check returns one warning each (`sandbox-hit`): N events."""
    program = client.post("/programs", json={"program_name": "Triage bench"}).json()["data"]["uuid"]
    for i in range(n):
        entity = client.post(f"/programs/{program}/entities", json={
            "entity_type": "individual", "first_name": f"Person{i}", "last_name": "sandbox-hit"}).json()["data"]
        r = client.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["adverse_media"]})
        assert r.status_code == 202, r.text
    deadline = time.monotonic() + 300
    while client.get("/events", params={"per_page": 1}).json()["meta"]["total"] < n:
        if time.monotonic() > deadline:
            raise SystemExit("the events were not raised")
        time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--mode", choices=("keys", "page"), default="keys")
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    url = f"{PG}screening_bench_triage_{os.getpid()}"
    _seed.recreate_database(url)
    env = {**_seed.app_env(url, REDIS), "DEFAULT_API_RATE_LIMIT": "10000000", "RQ_QUEUE_PREFIX": "benchtriage:",
           "LOGIN_RATE_LIMIT": "1000 per minute"}
    import redis
    redis.Redis.from_url(REDIS).flushdb()
    _seed._flask(["db", "upgrade"], env)
    boot = json.loads(_seed._flask(["accounts", "bootstrap", "--name", "Triage", "--email", "triage@example.com",
                                    "--password", "correct-horse-42", "--credit", "1000000"], env))
    port = free_port()
    procs = []
    per_event: list[float] = []
    try:
        procs += start_stack(env, port)
        site = f"http://127.0.0.1:{port}"
        api = httpx.Client(base_url=f"{site}/api/v1", headers={"Authorization": f"Bearer {boot['api_key']}"},
                           timeout=30)
        raise_events(api, args.events)

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
                                         args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(base_url=site, viewport={"width": 1366, "height": 900})
            page.set_default_timeout(15_000)
            page.goto("/login")
            page.get_by_label("E-mail").fill("triage@example.com")
            page.get_by_label("Password").fill("correct-horse-42")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(f"{site}/")
            page.wait_for_load_state()
            started_all = time.perf_counter()
            while len(per_event) < args.events:
                if args.mode == "keys":
                    open_rows = page.locator("tr[data-event-row]:not(.row-closed)")
                    if open_rows.count() == 0:  # this page is done: the Open tab shows the next ones
                        page.get_by_test_id("tab-open").click()
                        expect(open_rows.first).to_be_visible()
                        continue
                    page.locator("body").press("j") if not page.locator("tr.is-focused").count() else None
                    focused = page.locator("tr.is-focused")
                    number = focused.get_attribute("data-number")
                    started = time.perf_counter()
                    page.keyboard.press("d")
                    expect(page.locator(f'tr[data-number="{number}"] [data-status=closed_dismissed]')).to_be_visible()
                    per_event.append(time.perf_counter() - started)
                else:
                    if not per_event:
                        page.locator("body").press("j")
                        page.keyboard.press("Enter")
                        page.wait_for_selector("[data-event-page]")
                    heading = page.locator(".page-subtitle .mono").first.inner_text()
                    started = time.perf_counter()
                    page.keyboard.press("d")
                    if len(per_event) + 1 < args.events:
                        expect(page.locator(".page-subtitle .mono").first).not_to_have_text(heading)
                    else:
                        page.wait_for_url(f"{site}/")
                    per_event.append(time.perf_counter() - started)
            total = time.perf_counter() - started_all
            browser.close()
        closed = api.get("/events", params={"filter[status]": "closed_dismissed", "per_page": 1}).json()["meta"]["total"]
    finally:
        for p in procs:
            stop(p)
        with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_seed.db_name(url)}" WITH (FORCE)')
    ordered = sorted(per_event)
    print(f"triage bench ({args.mode}): {len(per_event)} events dismissed by keyboard in Chromium, gunicorn 2x4 on "
          f"PostgreSQL ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    print(f"  per decision (key to updated screen): median {statistics.median(per_event) * 1000:.0f} ms, "
          f"p95 {ordered[int(0.95 * (len(ordered) - 1))] * 1000:.0f} ms")
    print(f"  whole run incl. moving and page changes: {total:.1f} s, {total / len(per_event):.2f} s per event")
    print(f"  closed as dismissed according to the API: {closed}")
    return 0 if closed == args.events else 1


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
