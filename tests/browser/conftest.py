"""Real-browser fixtures: the app served by a werkzeug server thread on the test database, and Debian's
Chromium driven by Playwright (never `playwright install`)."""
from __future__ import annotations

import logging
import os
import threading

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
VIEWPORT = {"width": 1366, "height": 768}


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _fresh_rate_limits(app):
    """Each test starts with no login attempts counted. (The limiter is a process-wide extension: another
    test's app may have re-bound it to in-memory storage, which the Redis flush between tests misses.)"""
    from app.extensions import limiter
    with app.app_context():
        limiter.reset()


@pytest.fixture(scope="session")
def live_server(app):
    """The test app on 127.0.0.1 with a free port, served from a daemon thread for the whole session."""
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log per request
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium)"
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server, viewport=VIEWPORT)
    context.set_default_timeout(10_000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    # Console errors include Content-Security-Policy violations (a blocked script or style).
    console: list[str] = []
    tab.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    tab.js_errors = errors
    yield tab
    context.close()
    blocked = [m for m in console if "Content Security Policy" in m or "Refused to" in m]
    assert not blocked, blocked


@pytest.fixture
def sign_in(page):
    """Sign in through the real login form; returns the page on the dashboard."""
    def do(email: str, password: str):
        page.goto("/login")
        page.get_by_label("E-mail").fill(email)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/")
        return page
    return do
