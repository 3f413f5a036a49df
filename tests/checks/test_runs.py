"""Running checks under stress: concurrent launches against little credit, lost jobs and the sweeper, Redis
down at launch, report e-mails through a real SMTP server."""
from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from app.accounts.models import CreditEntry, credit_balance, ledger_sum
from app.checks.models import Check
from app.core.types import utcnow
from app.extensions import db
from tests.checks.conftest import save_lists
from tests.factories import ApiClient


def _empty_then_top_up(app, tenant, credits: int) -> None:
    from app.billing.services import post
    with app.app_context():
        post(tenant.account_id, "adjustment", -credit_balance(tenant.account_id), "test: start from zero")
        post(tenant.account_id, "top_up", credits, "test: exactly this much")
        db.session.commit()


def test_concurrent_launches_never_overdraw(app, tenant):
    """50 launches at once against credit for 10 checks: exactly 10 charged, 40 answered 402."""
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace")
    _empty_then_top_up(app, tenant, 10)  # phone_check? no: pep_sanction_check costs 1
    barrier = threading.Barrier(50)
    codes: list[int] = []
    lock = threading.Lock()

    def launch():
        client = ApiClient(app, tenant.api_key)
        barrier.wait()
        r = client.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        with lock:
            codes.append(r.status_code)

    threads = [threading.Thread(target=launch) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(codes)) == [202, 402], codes
    assert codes.count(202) == 10 and codes.count(402) == 40
    with app.app_context():
        assert credit_balance(tenant.account_id) == 0 == ledger_sum(tenant.account_id)
        assert db.session.scalar(select(func.count()).select_from(Check)) == 10
        assert db.session.scalar(select(func.count()).select_from(CreditEntry)
                                 .where(CreditEntry.kind == "charge")) == 10


def test_launch_with_redis_down_answers_503_and_charges_nothing(app, tenant, redis_url):
    from tests.api.test_resilience import _free_port, app_with_redis
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace")
    before = tenant.api.get("/credit").get_json()["data"]["balance"]
    with app_with_redis(app, f"redis://127.0.0.1:{_free_port()}/0") as degraded:
        r = ApiClient(degraded, tenant.api_key).post(f"/entities/{entity['uuid']}/checks",
                                                     json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 503 and int(r.headers["Retry-After"]) > 0
        r = ApiClient(degraded, tenant.api_key).post("/adhoc-checks", json={
            "check_types": ["phone_check"], "data": {"phone": "+61412345678"}})
        assert r.status_code == 503
    assert tenant.api.get("/credit").get_json()["data"]["balance"] == before
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Check)) == 0


def _check_id(app, check_uuid: str) -> int:
    with app.app_context():
        return db.session.scalar(select(Check.id).where(Check.uuid == uuid.UUID(check_uuid)))


def _sweep(app) -> dict[str, int]:
    """One pass of the recovery sweeper (app/recovery.py); what it did to checks."""
    from app import recovery
    return recovery.sweep()["check"]


def _lease(app) -> int:
    """Seconds after which a started run with no end is presumed lost: the job's timeout and the grace."""
    from app.checks.jobs import JOB_TIMEOUT
    return int(JOB_TIMEOUT + app.config["RECOVERY_GRACE_SECONDS"])


def test_sweeper_retries_a_lost_run_then_fails_and_refunds(app, tenant, work, factory):
    """A worker that died mid-run leaves the check `processing`: the sweeper queues it again, and after the
    last attempt fails it and refunds it."""
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace", phone1="+61412345678")
    before = tenant.api.get("/credit").get_json()["data"]["balance"]
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["phone_check"]})
    check_id = _check_id(app, launch.get_json()["data"]["uuid"])
    from app.jobs import queue
    with app.app_context():
        queue("checks").empty()  # the job is lost with its worker
        stale = utcnow() - timedelta(seconds=_lease(app) + 5)
        db.session.execute(update(Check).where(Check.id == check_id)
                           .values(status="processing", attempts=1, started_at=stale))
        db.session.commit()
        assert _sweep(app) == {"redispatched": 1, "given_up": 0}
        db.session.commit()
    work()  # the retried run completes
    with app.app_context():
        check = db.session.get(Check, check_id)
        assert check.status == "complete" and check.attempts == 2
        [note] = check.recoveries
        assert note["attempt"] == 1 and "did not end within 90 s" in note["why"]
        check_uuid = check.uuid
    # what an operator sees on the check page: the run was lost, recovered by the system, charged once
    page = factory.login(tenant.email).get(f"/checks/{check_uuid}").get_data(as_text=True)
    assert "Recovered by the system" in page and "Its run did not end within 90 s" in page
    assert "queued again" in page and "Runs started</dt><dd>2<" in page

    # a check lost on its last attempt is failed and refunded (once)
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["phone_check"]})
    check_id = _check_id(app, launch.get_json()["data"]["uuid"])
    with app.app_context():
        queue("checks").empty()
        db.session.execute(update(Check).where(Check.id == check_id).values(
            status="processing", attempts=3, started_at=utcnow() - timedelta(seconds=_lease(app) + 5)))
        db.session.commit()
        assert _sweep(app) == {"redispatched": 0, "given_up": 1}
        db.session.commit()
        assert _sweep(app) == {"redispatched": 0, "given_up": 0}
        check = db.session.get(Check, check_id)
        assert check.status == "failed" and "lost 3 times" in check.failed_reason
        given_up = check.uuid
    assert tenant.api.get("/credit").get_json()["data"]["balance"] == before - 1  # the first check only
    page = factory.login(tenant.email).get(f"/checks/{given_up}").get_data(as_text=True)
    assert "then gave it up and refunded it" in page and "The run was lost 3 times (worker stopped): given up" in page
    assert "goes on by itself" not in page


def test_pending_check_whose_job_vanished_is_requeued(app, tenant, work):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="Lovelace", phone1="+61412345678")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["phone_check"]})
    check_id = _check_id(app, launch.get_json()["data"]["uuid"])
    from app.jobs import queue
    with app.app_context():
        assert _sweep(app) == {"redispatched": 0, "given_up": 0}  # fresh: left alone
        old = utcnow() - timedelta(seconds=app.config["RECOVERY_GRACE_SECONDS"] + 5)
        db.session.execute(update(Check).where(Check.id == check_id).values(enqueued_at=old))
        db.session.commit()
        assert _sweep(app) == {"redispatched": 0, "given_up": 0}  # its job still waits in the queue
        queue("checks").empty()  # Redis lost the queued job (a restart without persistence)
        assert _sweep(app) == {"redispatched": 1, "given_up": 0}
        db.session.commit()
    work()
    with app.app_context():
        assert db.session.get(Check, check_id).status == "complete"


@pytest.fixture
def smtp_server():
    """A real SMTP server (aiosmtpd) on a free port, collecting what it receives."""
    from aiosmtpd.controller import Controller

    from tests.api.test_resilience import _free_port

    class Collect:
        def __init__(self):
            self.messages = []

        async def handle_DATA(self, server, session, envelope):
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content.decode()))
            return "250 OK"

    handler = Collect()
    controller = Controller(handler, hostname="127.0.0.1", port=_free_port())
    controller.start()
    yield controller, handler
    controller.stop()


def test_report_email_is_sent_through_smtp_after_the_check(app, tenant, work, smtp_server):
    controller, inbox = smtp_server
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com", "mlro@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    app.config.update(MAIL_SERVER="127.0.0.1", MAIL_PORT=controller.port, MAIL_FROM="alerts@screening.test")
    try:
        tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        work()
    finally:
        app.config.update(MAIL_SERVER=None, MAIL_PORT=25)
    assert len(inbox.messages) == 1
    sender, recipients, content = inbox.messages[0]
    assert sender == "alerts@screening.test"
    assert recipients == ["compliance@example.com", "mlro@example.com"]
    assert "1 new event" in content and "Bartholomew Quenneville" in content
    from app.notify.models import ReportEmail
    with app.app_context():
        email = db.session.scalar(select(ReportEmail))
        assert email.status == "sent" and email.transport == "smtp"


def test_report_email_waits_for_smtp_and_goes_out_when_it_answers(app, tenant, work, smtp_server):
    controller, inbox = smtp_server
    from tests.api.test_resilience import _free_port
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    app.config.update(MAIL_SERVER="127.0.0.1", MAIL_PORT=_free_port())  # nothing listens: refused
    try:
        tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        from app.notify import services as notify
        from app.notify.jobs import mail_settings
        from app.notify.models import ReportEmail
        from rq import SimpleWorker

        from app.jobs import _redis_connection
        with app.app_context():
            worker = SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + "checks"],
                                  connection=_redis_connection(app, worker=True))
            worker.work(burst=True, with_scheduler=False)
            from app.jobs import queue
            queue("notify").empty()
            email = db.session.scalar(select(ReportEmail))
            assert notify.deliver(email.id, mail_settings()) == "pending"
            db.session.commit()
            email = db.session.scalar(select(ReportEmail))
            assert email.attempts == 1 and "ConnectionRefused" in email.last_error
            assert tenant.api.get("/events").get_json()["meta"]["total"] == 1  # the check is unaffected
            app.config.update(MAIL_PORT=controller.port)
            assert notify.deliver(email.id, mail_settings()) == "sent"
            db.session.commit()
    finally:
        app.config.update(MAIL_SERVER=None, MAIL_PORT=25)
    assert len(inbox.messages) == 1


def test_embedded_mode_writes_report_emails_to_the_outbox(app, tenant, work, tmp_path):
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    app.config.update(MAIL_SERVER=None, MAIL_OUTBOX_DIR=str(tmp_path))
    try:
        tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        work()
    finally:
        app.config.update(MAIL_OUTBOX_DIR=None)
    [eml] = list(tmp_path.glob("*.eml"))
    text = eml.read_text()
    assert "To: compliance@example.com" in text and "Bartholomew Quenneville" in text


def test_a_lost_report_email_is_sent_again_and_one_that_keeps_failing_is_marked_failed(app, tenant, work):
    """Report e-mails are durable work of the same recovery as checks: a send job lost with Redis is dispatched
    again and the e-mail goes out once; one whose job keeps dying is marked failed (the admins' report e-mails
    page shows it), not left pending for good."""
    from app import recovery
    from app.jobs import queue
    from app.notify.models import ReportEmail
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com"])
    first = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    tenant.api.post(f"/entities/{first['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    from rq import SimpleWorker

    from app.jobs import _redis_connection
    with app.app_context():
        checks_only = SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + "checks"],
                                   connection=_redis_connection(app, worker=True))
        checks_only.work(burst=True, with_scheduler=False)  # the check raises its event and writes the e-mail
        queue("notify").empty()  # ... whose send job Redis then loses
        email = db.session.scalar(select(ReportEmail))
        lost_job = email.job_id
        assert email.status == "pending" and lost_job
        db.session.execute(update(ReportEmail).values(
            enqueued_at=utcnow() - timedelta(seconds=app.config["RECOVERY_GRACE_SECONDS"] + 5)))
        db.session.commit()
        assert recovery.sweep()["report_email"] == {"redispatched": 1, "given_up": 0}
        db.session.commit()
    work()
    with app.app_context():
        email = db.session.scalar(select(ReportEmail))
        assert email.status == "sent" and email.attempts == 1 and email.job_id != lost_job
        assert "not in Redis" in email.recoveries[0]["why"]
        # a send whose job dies every time (a worker crash, a message that cannot be built): given up
        db.session.execute(update(ReportEmail).values(
            status="pending", recoveries=[{"at": utcnow().isoformat(), "why": "lost", "attempt": 0}] * 4,
            enqueued_at=utcnow() - timedelta(seconds=app.config["RECOVERY_GRACE_SECONDS"] + 5)))
        db.session.commit()
        queue("notify").empty()
        assert recovery.sweep()["report_email"] == {"redispatched": 0, "given_up": 1}
        db.session.commit()
        email = db.session.scalar(select(ReportEmail))
        assert email.status == "failed" and email.last_error == "Not sent: the run was lost 5 times."


def test_a_report_email_that_cannot_be_built_fails_at_once_with_its_reason(app, tenant, tmp_path, monkeypatch):
    """A message that no retry could build (headers are made one line, so this is a bug, not a name): the e-mail
    is failed at once, with the reason the admins read, and the job ends cleanly with nothing half-written."""
    from app.notify import services as notify
    from app.notify.models import ReportEmail
    with app.app_context():
        email = ReportEmail(account_id=tenant.account_id, recipients=["compliance@example.com"],
                            subject="[Screening] 1 new event: Bartholomew\u2028Quenneville", body="x")
        db.session.add(email)
        db.session.commit()

        def unbuildable(*_a, **_k):
            raise ValueError("Header values may not contain linefeed or carriage return characters")
        monkeypatch.setattr(notify, "_message", unbuildable)
        assert notify.deliver(email.id, {"MAIL_OUTBOX_DIR": str(tmp_path)}) == "failed"
        db.session.commit()
        email = db.session.get(ReportEmail, email.id)
        assert email.status == "failed" and email.attempts == 1
        assert email.last_error.startswith("The message could not be built: ValueError: Header values may not")
    assert not list(tmp_path.iterdir())  # nothing half-written
