"""Sessions and sign-in (issue 7 §2): server-side invalidation, remember-me, throttling, equal work."""
from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from app.accounts.models import AuditLog
from app.extensions import db
from tests.factories import PASSWORD, csrf_from


def sign_in(app, email, password=PASSWORD, remember=False):
    client = app.test_client()
    token = csrf_from(client.get("/login").get_data(as_text=True))
    data = {"email": email, "password": password, "csrf_token": token}
    if remember:
        data["remember"] = "y"
    response = client.post("/login", data=data)
    return client, response


def cookies(client) -> dict:
    return {c.key: c.value for c in client._cookies.values()}


def replay(app, jar: dict):
    other = app.test_client()
    for key, value in jar.items():
        other.set_cookie(key, value)
    return other


def test_a_replayed_cookie_after_logout_is_anonymous(app, tenant):
    client, r = sign_in(app, tenant.email, remember=True)
    assert r.status_code == 302
    stolen = cookies(client)
    assert "remember_token" in stolen
    assert replay(app, stolen).get("/programs").status_code == 200  # the copy works while signed in
    token = csrf_from(client.get("/").get_data(as_text=True))
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    again = replay(app, stolen)
    assert again.get("/programs").status_code == 302  # to the login page
    only_remember = replay(app, {"remember_token": stolen["remember_token"]})
    assert only_remember.get("/programs").status_code == 302


def test_logout_ends_the_users_other_sessions_too(app, tenant):
    laptop, _ = sign_in(app, tenant.email)
    phone, _ = sign_in(app, tenant.email)
    token = csrf_from(laptop.get("/").get_data(as_text=True))
    laptop.post("/logout", data={"csrf_token": token})
    assert phone.get("/programs").status_code == 302


def test_password_change_ends_other_sessions_but_not_this_one(app, tenant):
    this, _ = sign_in(app, tenant.email)
    other, _ = sign_in(app, tenant.email)
    token = csrf_from(this.get("/account/password").get_data(as_text=True))
    wrong = this.post("/account/password", data={"csrf_token": token, "current_password": "nope-nope-1",
                                                  "new_password": "brand-new-secret-9"})
    assert wrong.status_code == 422 and "not your current password" in wrong.get_data(as_text=True)
    r = this.post("/account/password", data={"csrf_token": token, "current_password": PASSWORD,
                                              "new_password": "brand-new-secret-9"})
    assert r.status_code == 302
    assert this.get("/programs").status_code == 200
    assert other.get("/programs").status_code == 302
    assert sign_in(app, tenant.email)[1].status_code == 401
    assert sign_in(app, tenant.email, "brand-new-secret-9")[1].status_code == 302


def test_deactivation_ends_sessions(app, tenant, factory):
    email = factory.user(tenant, role="analyst")
    analyst, _ = sign_in(app, email)
    assert analyst.get("/programs").status_code == 200
    admin, _ = sign_in(app, tenant.email)
    from app.accounts.models import User
    with app.app_context():
        user_uuid = db.session.scalar(select(User.uuid).where(User.email == email))
    token = csrf_from(admin.get("/admin/users").get_data(as_text=True))
    admin.post(f"/admin/users/{user_uuid}/disable", data={"csrf_token": token, "disabled": "1"})
    assert analyst.get("/programs").status_code == 302


def test_session_is_new_at_sign_in(app, tenant):
    client = app.test_client()
    client.get("/login")
    before = cookies(client).get("session")
    token = csrf_from(client.get("/login").get_data(as_text=True))
    client.post("/login", data={"email": tenant.email, "password": PASSWORD, "csrf_token": token})
    after = cookies(client).get("session")
    assert after and after != before
    with client.session_transaction() as s:
        assert len(s.get("sid", "")) == 32


def test_remember_me_lasts_30_days(app, tenant):
    assert app.config["REMEMBER_COOKIE_DURATION"] == timedelta(days=30)
    client, r = sign_in(app, tenant.email, remember=True)
    header = next(h for h in r.headers.getlist("Set-Cookie") if h.startswith("remember_token="))
    assert "Max-Age=2592000" in header or "Expires=" in header
    from email.utils import parsedate_to_datetime
    import datetime as dt
    expires = parsedate_to_datetime(header.split("Expires=")[1].split(";")[0])
    assert expires - dt.datetime.now(dt.timezone.utc) <= timedelta(days=30, minutes=1)


def test_failed_sign_ins_lock_the_account_for_a_while(app, tenant):
    app.config["LOGIN_RATE_LIMIT"] = "1000 per minute"  # the per-address limit is not what is tested here
    try:
        codes = [sign_in(app, tenant.email, "wrong-password-1")[1].status_code for _ in range(10)]
        assert codes == [401] * 10
        client, r = sign_in(app, tenant.email)  # the right password now waits too
        assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
        assert "Too many failed sign-ins for this account" in r.get_data(as_text=True)
        # an e-mail that exists nowhere is throttled the same way, so the answer tells nothing
        unknown = [sign_in(app, "nobody@example.com", "x-wrong-1")[1].status_code for _ in range(11)]
        assert unknown == [401] * 10 + [429]
    finally:
        app.config["LOGIN_RATE_LIMIT"] = "10 per minute"
    with app.app_context():
        rows = list(db.session.scalars(select(AuditLog).where(AuditLog.action == "auth.login_failed")))
        reasons = [r.changes["reason"] for r in rows]
        assert reasons.count("bad_credentials") == 10 and reasons.count("throttled") == 1


def test_unknown_disabled_and_existing_accounts_cost_one_hash_each(app, tenant, factory, monkeypatch):
    """Equal work, not timing: each path verifies exactly one argon2 hash."""
    import app.accounts.services as services
    email = factory.user(tenant, role="viewer")
    from app.accounts.models import User
    with app.app_context():
        db.session.scalar(select(User).where(User.email == email)).is_disabled = True
        db.session.commit()
    calls = []
    real = services._hasher

    class Counting:
        def verify(self, hash_, password):
            calls.append(1)
            return real.verify(hash_, password)

        def __getattr__(self, name):
            return getattr(real, name)

    monkeypatch.setattr(services, "_hasher", Counting())
    with app.app_context():
        for address, password in (("nobody@example.com", "x"), (email, PASSWORD), (tenant.email, "wrong"),
                                  (tenant.email, PASSWORD)):
            calls.clear()
            services.authenticate_user(address, password)
            assert len(calls) == 1, address
        db.session.rollback()


def test_form_posts_from_another_site_are_refused(app, tenant):
    client, _ = sign_in(app, tenant.email)
    token = csrf_from(client.get("/programs/new").get_data(as_text=True))
    data = {"csrf_token": token, "program_name": "Cross-site"}
    evil = client.post("/programs/new", data=data, headers={"Origin": "https://evil.example"})
    assert evil.status_code == 403 and "sent from another site" in evil.get_data(as_text=True)
    evil = client.post("/programs/new", data=data, headers={"Referer": "https://evil.example/page"})
    assert evil.status_code == 403
    ours = client.post("/programs/new", data=data, headers={"Origin": "http://localhost"})
    assert ours.status_code == 302


def test_control_characters_in_the_portal(app, tenant):
    client, _ = sign_in(app, tenant.email)
    r = client.get("/programs", query_string={"q": "a\x00b"})
    assert r.status_code == 400 and "field q contains characters that are not allowed" in r.get_data(as_text=True)
    token = csrf_from(client.get("/programs/new").get_data(as_text=True))
    r = client.post("/programs/new", data={"csrf_token": token, "program_name": "Bad\x00"})
    assert r.status_code == 400
