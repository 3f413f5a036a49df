"""Issue 24 §2-3: a report e-mail cannot be stopped by its entity's name, every failed try is counted with its
error and retried after a backoff, then marked failed where the account's admins see it and can send it again;
every failed job run is recorded (job_failures) for the admins' page and the operator's `flask jobs failures`."""
from __future__ import annotations

import email
import email.policy
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from app.core.models import JobFailure
from app.core.types import utcnow
from app.entities.models import Entity
from app.extensions import db
from app.notify.models import ReportEmail
from tests.checks.conftest import save_lists
from tests.factories import csrf_from


def _entity_named_before_the_rule(app, tenant, first_name: str) -> dict:
    """An entity whose name holds a character the door now refuses, as a record written before the rule."""
    program = tenant.program(report_emails=["compliance@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    with app.app_context():
        db.session.execute(update(Entity).where(Entity.uuid == entity["uuid"]).values(
            first_name=first_name, entity_name=f"{first_name} Quenneville"))
        db.session.commit()
    return entity


@pytest.mark.parametrize("separator", ["\u2028", "\u0085", "\u2029", "\r\n", "\x1c"])
def test_a_name_with_a_line_separator_from_before_the_rule_still_sends(app, tenant, work, tmp_path, separator):
    save_lists(app)
    entity = _entity_named_before_the_rule(app, tenant, f"Bartholomew{separator}Ignatius")
    app.config.update(MAIL_SERVER=None, MAIL_OUTBOX_DIR=str(tmp_path))
    try:
        launch = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        assert launch.status_code == 202
        work()
    finally:
        app.config.update(MAIL_OUTBOX_DIR=None)
    [eml] = list(tmp_path.glob("*.eml"))
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert message["Subject"].strip() == "[Screening] 1 new event: Bartholomew Ignatius Quenneville (PEP & Sanctions)"
    assert message["Bcc"] is None and message["To"] == "compliance@example.com"
    assert launch.get_json()["data"]["uuid"] in message.get_content()
    with app.app_context():
        sent = db.session.scalar(select(ReportEmail))
        assert (sent.status, sent.attempts, sent.last_error) == ("sent", 1, None)


def test_a_stored_subject_with_a_line_separator_is_sent_on_one_line(app, tenant, tmp_path):
    """A report e-mail row written before the fix (its subject holds U+2028 and a forged header): sent, with the
    separator as a space, and no header added."""
    from app.notify import services as notify
    with app.app_context():
        row = ReportEmail(account_id=tenant.account_id, recipients=["compliance@example.com"],
                          subject="[Screening] 1 new event: Gilberto Jose\u2028Bcc: x@evil.example", body="a\u2028b")
        db.session.add(row)
        db.session.commit()
        assert notify.deliver(row.id, {"MAIL_OUTBOX_DIR": str(tmp_path)}) == "sent"
        db.session.commit()
    [eml] = list(tmp_path.glob("*.eml"))
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    assert message["Subject"].strip() == "[Screening] 1 new event: Gilberto Jose Bcc: x@evil.example"
    assert message["Bcc"] is None and message.get_content() == "a\nb\n"


def _written_email(app, tenant) -> ReportEmail:
    """A check that raised an event, its report e-mail written and its first send job taken off the queue."""
    from rq import SimpleWorker

    from app.jobs import _redis_connection, queue
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    with app.app_context():
        SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + "checks"], connection=_redis_connection(app, worker=True)
                     ).work(burst=True, with_scheduler=False)
        queue("notify").empty()
        return db.session.scalar(select(ReportEmail))


def test_every_failed_try_is_recorded_and_retried_with_backoff_then_failed(app, tenant):
    from tests.api.test_resilience import _free_port

    from app.jobs import queue
    from app.notify import jobs as notify_jobs
    from app.notify import services as notify
    written = _written_email(app, tenant)
    app.config.update(MAIL_SERVER="127.0.0.1", MAIL_PORT=_free_port())  # nothing listens: refused
    try:
        with app.app_context():
            registry = queue("notify").scheduled_job_registry
            job_id = written.job_id
            for attempt in range(1, notify.MAX_ATTEMPTS + 1):
                before = utcnow()
                outcome = notify_jobs.send_report_email(written.id, job_id)
                row = db.session.get(ReportEmail, written.id)
                db.session.refresh(row)
                assert row.attempts == attempt and "ConnectionRefused" in row.last_error
                if attempt < notify.MAX_ATTEMPTS:
                    assert outcome == "pending" and row.status == "pending" and row.job_id != job_id
                    due = registry.get_scheduled_time(row.job_id)  # the retry waits its turn in RQ
                    delay = notify.retry_delay(attempt)
                    assert before + timedelta(seconds=delay - 2) <= due <= utcnow() + timedelta(seconds=delay + 2)
                    job_id = row.job_id
                else:
                    assert outcome == "failed" and row.status == "failed"
                db.session.rollback()
            assert [notify.retry_delay(n) for n in range(1, 6)] == [30, 120, 600, 1800, 1800]
    finally:
        app.config.update(MAIL_SERVER=None, MAIL_PORT=25)


def test_a_send_that_raises_outside_its_handling_is_counted_retried_and_recorded(app, tenant, monkeypatch):
    """The bug of issue 24: an error outside `deliver`'s handling rolled the try back, so the e-mail stayed
    pending with 0 attempts and no error for good. Now the try is counted with its error, a retry is scheduled,
    and the job's failure is in job_failures with its account."""
    from app import jobs
    from app.notify import services as notify
    written = _written_email(app, tenant)

    def explode(*_a, **_k):
        raise RuntimeError("the database went away")
    monkeypatch.setattr(notify, "deliver", explode)
    with app.app_context():
        with pytest.raises(RuntimeError):
            jobs.run_job("send_report_email", written.id, written.job_id)
        row = db.session.get(ReportEmail, written.id)
        assert (row.status, row.attempts, row.last_error) == ("pending", 1, "RuntimeError: the database went away")
        assert row.job_id != written.job_id  # dispatched again, after its backoff
        [failure] = db.session.scalars(select(JobFailure)).all()
        assert (failure.job_name, failure.args, failure.attempts, failure.account_id) == (
            "send_report_email", [written.id], 1, tenant.account_id)
        assert failure.last_error == "RuntimeError: the database went away"
        # the retry fails the same way: the same row counts it (the fencing token is not part of the work)
        with pytest.raises(RuntimeError):
            jobs.run_job("send_report_email", written.id, row.job_id)
        db.session.expire_all()
        [failure] = db.session.scalars(select(JobFailure)).all()
        assert failure.attempts == 2 and db.session.get(ReportEmail, written.id).attempts == 2


def test_admins_see_a_failed_email_with_its_error_and_send_it_again(app, tenant, factory, work, tmp_path):
    written = _written_email(app, tenant)
    with app.app_context():
        db.session.execute(update(ReportEmail).where(ReportEmail.id == written.id).values(
            status="failed", attempts=5, last_error="SMTPRecipientsRefused: 550 mailbox unavailable"))
        db.session.commit()
    analyst = factory.login(factory.user(tenant, role="analyst"))
    assert analyst.get("/admin/report-emails").status_code == 403
    client = factory.login(tenant.email)
    program_uuid = tenant.api.get("/programs").get_json()["data"][0]["uuid"]
    program_page = client.get(f"/programs/{program_uuid}").get_data(as_text=True)
    assert "1 report e-mail of this program could not be sent" in program_page  # the program's admins are told
    assert "could not be sent" not in analyst.get(f"/programs/{program_uuid}").get_data(as_text=True)
    page = client.get("/admin/report-emails").get_data(as_text=True)
    assert "1 report e-mail could not be sent" in page and "550 mailbox unavailable" in page
    assert f"/admin/report-emails/{written.uuid}/retry" in page
    token = csrf_from(page)
    own = csrf_from(analyst.get("/programs").get_data(as_text=True))
    assert analyst.post(f"/admin/report-emails/{written.uuid}/retry", data={"csrf_token": own}).status_code == 403
    answer = client.post(f"/admin/report-emails/{written.uuid}/retry", data={"csrf_token": token})
    assert answer.status_code == 302
    with app.app_context():
        row = db.session.get(ReportEmail, written.id)
        assert (row.status, row.attempts) == ("pending", 0)
    app.config.update(MAIL_SERVER=None, MAIL_OUTBOX_DIR=str(tmp_path))
    try:
        work()
    finally:
        app.config.update(MAIL_OUTBOX_DIR=None)
    with app.app_context():
        assert db.session.get(ReportEmail, written.id).status == "sent"
    assert len(list(tmp_path.glob("*.eml"))) == 1
    again = client.post(f"/admin/report-emails/{written.uuid}/retry", data={"csrf_token": token},
                        follow_redirects=True)
    assert "Only a failed e-mail can be sent again." in again.get_data(as_text=True)


def test_failed_jobs_are_shown_to_their_accounts_admins_and_to_the_operator(app, tenant, other_tenant, factory):
    from app import jobs
    with app.app_context():
        jobs.record_failure("send_report_email", (1, "mail-1-aaaa"), {}, "OSError: disk full")
        db.session.execute(update(JobFailure).values(account_id=tenant.account_id))
        db.session.commit()
        jobs.record_failure("run_check", (99, "check-99-bbbb"), {}, "TimeoutError: upstream")
        db.session.execute(update(JobFailure).where(JobFailure.job_name == "run_check")
                           .values(account_id=other_tenant.account_id))
        db.session.commit()
    mine = factory.login(tenant.email).get("/admin/failed-jobs").get_data(as_text=True)
    assert "send_report_email" in mine and "OSError: disk full" in mine and "run_check" not in mine
    theirs = factory.login(other_tenant.email).get("/admin/failed-jobs").get_data(as_text=True)
    assert "TimeoutError: upstream" in theirs and "disk full" not in theirs
    assert factory.login(factory.user(tenant, role="analyst")).get("/admin/failed-jobs").status_code == 403
    result = app.test_cli_runner().invoke(args=["jobs", "failures", "--json"])
    assert result.exit_code == 0, result.output
    import json
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert {(x["job"], x["attempts"], x["account_uuid"]) for x in lines} == {
        ("send_report_email", 1, tenant.account_uuid), ("run_check", 1, other_tenant.account_uuid)}
    text = app.test_cli_runner().invoke(args=["jobs", "failures", "--account", tenant.account_uuid]).output
    assert "send_report_email(1,)" in text and "disk full" in text and "run_check" not in text


def test_a_successful_run_records_nothing_and_costs_no_query(app, tenant):
    """The success path stays as it was: no SQL and no Redis call beyond the job's own."""
    from sqlalchemy import event

    from app import jobs
    statements = []
    with app.app_context():
        def count(*_a, **_k):
            statements.append(1)
        event.listen(db.engine, "before_cursor_execute", count)
        try:
            assert jobs.run_job("purge_idempotency_records") == 0
            purge_only = len(statements)
        finally:
            event.remove(db.engine, "before_cursor_execute", count)
        assert db.session.scalar(select(JobFailure.id)) is None
    assert purge_only == 1  # the purge's own DELETE
