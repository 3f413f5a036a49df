"""Issue 24 §3: adding a user never confirms that an address signs in to another account. Admins invite; the
answer, the users page and the audit trail are the same for a new address and for another account's; the real
owner of a taken address is told by e-mail; a user of this account is a plain field error."""
from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select, update

from app.accounts.models import Invitation, User
from app.core.models import AuditLog
from app.core.types import utcnow
from app.extensions import db
from app.notify.models import ReportEmail
from tests.portal.conftest import text


def _mail_to(app, address: str) -> ReportEmail:
    with app.app_context():
        return db.session.scalar(select(ReportEmail).where(ReportEmail.kind == "invitation")
                                 .order_by(ReportEmail.id.desc()).limit(1).where(
                                     ReportEmail.recipients.cast(db.String).contains(address)))


def _token(app, address: str) -> str:
    return re.search(r"/invitations/([\w-]+)", _mail_to(app, address).body).group(1)


def _flash(response) -> str:
    return re.search(r'class="flash flash-success"[^>]*>\s*<span>([^<]*)', text(response)).group(1)


def test_an_invited_person_sets_a_password_and_signs_in(app, admin, tenant, client):
    r = admin.post("/admin/users", {"email": "New.Person@Example.com", "role": "viewer"}, follow_redirects=True)
    assert "Invitation sent to new.person@example.com (as viewer)" in _flash(r)
    page = text(admin.get("/admin/users"))
    assert "new.person@example.com" in page and 'data-testid="invitations"' in page
    mail = _mail_to(app, "new.person@example.com")
    assert mail.recipients == ["new.person@example.com"] and "invited you" in mail.body
    assert "new.person@example.com" not in text(admin.get("/admin/report-emails"))  # the link stays the person's
    token = _token(app, "new.person@example.com")
    form = client.get(f"/invitations/{token}")
    assert form.status_code == 200 and "new.person@example.com" in text(form)
    from tests.factories import csrf_from
    csrf = csrf_from(text(form))
    weak = client.post(f"/invitations/{token}", data={"csrf_token": csrf, "password": "short", "confirm": "short"})
    assert weak.status_code == 422 and "at least 10 characters" in text(weak)
    differ = client.post(f"/invitations/{token}", data={"csrf_token": csrf, "password": "s3cure-pass-99",
                                                        "confirm": "s3cure-pass-98"})
    assert differ.status_code == 422 and "The two passwords differ." in text(differ)
    done = client.post(f"/invitations/{token}", data={"csrf_token": csrf, "password": "s3cure-pass-99",
                                                      "confirm": "s3cure-pass-99"})
    assert done.status_code == 302 and client.get("/programs").status_code == 200  # signed in
    with app.app_context():
        user = db.session.scalar(select(User).where(User.email == "new.person@example.com"))
        assert user.role == "viewer" and user.account_id == tenant.account_id
    assert client.get(f"/invitations/{token}").status_code == 404  # used
    page = text(admin.get("/admin/users"))
    assert 'data-testid="invitations"' not in page and "new.person@example.com" in page


def test_another_accounts_address_gets_the_same_answer_and_its_owner_is_told(app, admin, tenant, other_tenant):
    taken, fresh = other_tenant.email, "nobody.yet@example.com"
    answers = {}
    for address in (taken, fresh):
        r = admin.post("/admin/users", {"email": address, "role": "analyst"})
        assert r.status_code == 302 and r.headers["Location"].endswith("/admin/users")
        answers[address] = _flash(admin.get("/admin/users")).replace(address, "ADDRESS")
    assert answers[taken] == answers[fresh]
    page = text(admin.get("/admin/users"))
    rows = re.findall(r"<tr>\s*<td class=\"primary\"><strong>([^<]+)</strong>.*?</tr>", page, re.S)
    assert set(rows) >= {taken, fresh}
    shapes = {address: re.sub(r"\s+", " ", re.search(
        r"<strong>" + re.escape(address) + r"</strong>(.*?)</tr>", page, re.S).group(1))
        for address in (taken, fresh)}
    strip = re.compile(r'invitation_uuid=[^"]+|/admin/invitations/[0-9a-f-]+/withdraw|of \S+@example\.com|'
                       r'<time[^>]*>[^<]*</time>|datetime="[^"]*"')
    assert strip.sub("", shapes[taken]) == strip.sub("", shapes[fresh])
    with app.app_context():
        audit = {row.changes["email"]: (row.action, row.target_type)
                 for row in db.session.scalars(select(AuditLog).where(AuditLog.action == "user.invited"))}
        assert audit[taken] == audit[fresh] == ("user.invited", "invitation")
        assert db.session.scalar(select(User.account_id).where(User.email == taken)) == other_tenant.account_id
    told = _mail_to(app, taken)
    assert "already signs in to another account" in told.body and "/invitations/" not in told.body
    assert "/invitations/" in _mail_to(app, fresh).body
    page = text(admin.get("/admin/report-emails"))
    assert taken not in page and fresh not in page


def test_a_taken_address_can_never_be_accepted(app, tenant, other_tenant, client):
    """Even with the link's secret (which no e-mail carries for a taken address), no second login is made."""
    from app.accounts import services as accounts
    from app.accounts.models import Account
    from app.core.errors import Conflict
    import pytest
    with app.app_context():
        actor = accounts.cli_actor(db.session.get(Account, tenant.account_id))
        invitation = accounts.invite_user(actor, email=other_tenant.email, role="viewer")
        token = "known-to-the-test-only-" + "x" * 30
        invitation.token_hash = accounts._token_hash(token)
        db.session.commit()
        with pytest.raises(Conflict, match="already signs in to another account"):
            accounts.accept_invitation(token, "s3cure-pass-99")
        db.session.rollback()
        assert db.session.scalar(select(User.account_id).where(User.email == other_tenant.email)) \
            == other_tenant.account_id


def test_a_user_of_this_account_is_a_field_error(admin, tenant):
    r = admin.post("/admin/users", {"email": tenant.email.upper(), "role": "viewer"})
    assert r.status_code == 422
    html = text(r)
    assert 'id="email-error"' in html and "A user of this account already signs in with this e-mail." in html


def test_bad_input_is_a_field_error(admin):
    r = admin.post("/admin/users", {"email": "not-an-email", "role": "admin"})
    assert r.status_code == 422 and 'id="email-error"' in text(r) and "not-an-email" in text(r)
    r = admin.post("/admin/users", {"email": "ok@example.com", "role": "owner"})
    assert r.status_code == 422 and 'id="role-error"' in text(r)


def test_a_withdrawn_or_expired_invitation_opens_nothing(app, admin, client):
    admin.post("/admin/users", {"email": "late@example.com", "role": "viewer"})
    admin.post("/admin/users", {"email": "gone@example.com", "role": "viewer"})
    with app.app_context():
        db.session.execute(update(Invitation).where(Invitation.email == "late@example.com")
                           .values(expires_at=utcnow() - timedelta(seconds=1)))
        db.session.commit()
        gone = db.session.scalar(select(Invitation.uuid).where(Invitation.email == "gone@example.com"))
    assert "Expired" in text(admin.get("/admin/users"))
    late = client.get(f"/invitations/{_token(app, 'late@example.com')}")
    assert late.status_code == 404 and "has expired" in text(late)
    assert admin.post(f"/admin/invitations/{gone}/withdraw").status_code == 302
    assert client.get(f"/invitations/{_token(app, 'gone@example.com')}").status_code == 404
    # inviting again sends a fresh link
    admin.post("/admin/users", {"email": "late@example.com", "role": "analyst"})
    assert client.get(f"/invitations/{_token(app, 'late@example.com')}").status_code == 200


def test_only_admins_invite(analyst, viewer):
    for who in (analyst, viewer):
        assert who.post("/admin/users", {"email": "x@example.com", "role": "admin"}).status_code == 403
