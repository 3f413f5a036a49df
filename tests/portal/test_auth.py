"""Login, logout, `next` redirects, CSRF, sessions of disabled users, htmx without a session."""
import pytest

from tests.factories import PASSWORD, csrf_from
from tests.portal.conftest import text


def _login(client, email, password=PASSWORD, next_=None, token=True):
    page = client.get("/login")
    data = {"email": email, "password": password}
    if token:
        data["csrf_token"] = csrf_from(text(page))
    url = "/login" + (f"?next={next_}" if next_ else "")
    return client.post(url, data=data)


def test_login_page_renders_with_labels_and_csrf(client):
    r = client.get("/login")
    html = text(r)
    assert r.status_code == 200
    assert 'for="email"' in html and 'for="password"' in html and 'name="csrf_token"' in html
    assert 'autocomplete="current-password"' in html


def test_login_success_and_logout(client, tenant):
    r = _login(client, tenant.email)
    assert r.status_code == 302 and r.headers["Location"] == "/"
    assert client.get("/").status_code == 200
    token = csrf_from(text(client.get("/")))
    r = client.post("/logout", data={"csrf_token": token})
    assert r.status_code == 302 and "/login" in r.headers["Location"]
    r = client.get("/")
    assert r.status_code == 302 and "/login" in r.headers["Location"]


def test_wrong_password_is_401_with_message(client, tenant):
    r = _login(client, tenant.email, "wrong-password-1")
    assert r.status_code == 401
    assert "E-mail or password is incorrect." in text(r)
    assert client.get("/").status_code == 302


def test_login_without_csrf_token_is_refused(client, tenant):
    r = _login(client, tenant.email, token=False)
    assert r.status_code == 400
    assert client.get("/").status_code == 302


def test_logout_requires_csrf(admin):
    r = admin.post("/logout", csrf=False)
    assert r.status_code == 400
    assert admin.get("/").status_code == 200


@pytest.mark.parametrize("target,expected", [
    ("/programs", "/programs"),
    ("https://evil.example.com/", "/"),
    ("//evil.example.com/", "/"),
    ("/\\evil.example.com", "/"),
])
def test_next_redirects_only_to_local_paths(client, tenant, target, expected):
    r = _login(client, tenant.email, next_=target)
    assert r.status_code == 302
    assert r.headers["Location"] == expected


def test_protected_page_redirects_to_login_with_next(client):
    r = client.get("/programs")
    assert r.status_code == 302
    assert r.headers["Location"].startswith("/login?next=")


def test_htmx_request_without_session_gets_hx_redirect(client):
    r = client.get("/programs", headers={"HX-Request": "true"})
    assert r.status_code == 401
    assert r.headers["HX-Redirect"].startswith("/login")


def test_disabled_user_cannot_log_in_and_loses_session(app, tenant, factory, login):
    email = factory.user(tenant, "analyst")
    user_client = login(email)
    admin = login(tenant.email)
    from app.extensions import db
    from app.accounts.models import User
    from sqlalchemy import select
    with app.app_context():
        user_uuid = db.session.scalar(select(User.uuid).where(User.email == email))
    r = admin.post(f"/admin/users/{user_uuid}/disable", {"disabled": "1"})
    assert r.status_code == 302
    assert user_client.get("/").status_code == 302  # the open session is gone
    r = _login(factory.app.test_client(), email)
    assert r.status_code == 401


def test_security_headers_on_portal_pages(admin):
    r = admin.get("/")
    assert r.headers["X-Frame-Options"] == "DENY"
    assert r.headers["X-Content-Type-Options"] == "nosniff"


def test_no_external_assets(client):
    html = text(client.get("/login"))
    assert "http://" not in html.replace("http://localhost", "") and "https://" not in html
    assert "/static/vendor/htmx/htmx.min.js" in html and "/static/css/app.css" in html


def test_login_is_rate_limited(client, tenant, app):
    limit = int(app.config["LOGIN_RATE_LIMIT"].split()[0])
    token = csrf_from(text(client.get("/login")))
    statuses = [client.post("/login", data={"email": tenant.email, "password": "wrong-password-1",
                                            "csrf_token": token}).status_code for _ in range(limit + 1)]
    assert statuses[:limit] == [401] * limit
    assert statuses[-1] == 429
