"""Portal fixtures: logged-in test clients per role and a CSRF-aware form poster."""
from __future__ import annotations

import re

import pytest

from tests.factories import PASSWORD, csrf_from


class PortalClient:
    """A logged-in Flask test client that sends the page's CSRF token with every write."""

    def __init__(self, client, email: str):
        self.client = client
        self.email = email
        self._token: str | None = None

    def token(self) -> str:
        if self._token is None:
            self._token = csrf_from(self.client.get("/").get_data(as_text=True))
        return self._token

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def htmx_get(self, url, **kw):
        return self.client.get(url, headers={"HX-Request": "true", **kw.pop("headers", {})}, **kw)

    def post(self, url, data=None, *, csrf=True, **kw):
        data = dict(data or {})
        if csrf:
            data.setdefault("csrf_token", self.token())
        return self.client.post(url, data=data, **kw)

    def htmx_post(self, url, data=None, **kw):
        """An htmx request: the token travels in the X-CSRFToken header as base.html configures it."""
        headers = {"HX-Request": "true", "X-CSRFToken": self.token(), **kw.pop("headers", {})}
        return self.client.post(url, data=dict(data or {}), headers=headers, **kw)


@pytest.fixture(autouse=True)
def _fresh_rate_limits(app):
    """Each test starts with no login attempts counted. (The limiter is a process-wide extension: another
    test's app may have re-bound it to in-memory storage, which the Redis flush between tests misses.)"""
    from app.extensions import limiter
    with app.app_context():
        limiter.reset()


@pytest.fixture
def login(app):
    """A client signed in through the login form (the CSRF token taken from the page)."""
    def make(email: str, password: str = PASSWORD) -> PortalClient:
        client = app.test_client()
        token = csrf_from(client.get("/login").get_data(as_text=True))
        response = client.post("/login", data={"email": email, "password": password, "csrf_token": token})
        body = response.get_data(as_text=True)
        flashes = re.findall(r'class="flash[^"]*"[^>]*>\s*<span>([^<]*)', body)
        assert response.status_code == 302, (response.status_code, flashes, body[body.find("<main"):][:800])
        return PortalClient(client, email)
    return make


@pytest.fixture
def admin(tenant, login):
    return login(tenant.email)


@pytest.fixture
def analyst(tenant, factory, login):
    return login(factory.user(tenant, "analyst"))


@pytest.fixture
def viewer(tenant, factory, login):
    return login(factory.user(tenant, "viewer"))


def text(response) -> str:
    return response.get_data(as_text=True)


def uuid_in(location: str) -> str:
    m = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", location)
    assert m, location
    return m.group(0)
