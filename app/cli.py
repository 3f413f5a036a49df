"""flask CLI: account administration, background workers and the scheduler, demo seed."""
from __future__ import annotations

import json
import sys

import click
from flask import Flask, current_app
from flask.cli import AppGroup
from sqlalchemy import select

from app.accounts import services as accounts
from app.accounts.models import Account
from app.billing import services as billing
from app.core.errors import DomainError
from app.core.transactions import transaction
from app.extensions import db
from app.lists import cli as lists_cli
from app.screening import cli as screening_cli

accounts_cli = AppGroup("accounts", help="Accounts, users, API keys and credit.")
jobs_cli = AppGroup("jobs", help="Background workers and the scheduler.")
credit_cli = AppGroup("credit", help="Prices per check type.")
entities_cli = AppGroup("entities", help="Entities: synthetic customers for benchmarks.")


def _fail(exc: DomainError) -> None:
    detail = f" {json.dumps(exc.errors)}" if exc.errors else ""
    click.echo(f"Error: {exc.message}{detail}", err=True)
    sys.exit(2)


def _account(account_uuid: str) -> Account:
    account = db.session.scalar(select(Account).where(Account.uuid == _uuid(account_uuid)))
    if account is None:
        click.echo(f"Error: no account {account_uuid}", err=True)
        sys.exit(2)
    return account


def _uuid(value: str):
    import uuid
    try:
        return uuid.UUID(value)
    except ValueError:
        click.echo(f"Error: {value!r} is not a UUID", err=True)
        sys.exit(2)


@accounts_cli.command("bootstrap")
@click.option("--name", required=True)
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--credit", type=int, default=0, show_default=True)
@click.option("--live", is_flag=True, help="A live account (sk_live_ keys) instead of a sandbox one.")
@click.option("--products", default=None, help="Comma-separated products to grant (default: all).")
def bootstrap(name: str, email: str, password: str, credit: int, live: bool, products: str | None) -> None:
    """A new account with every product enabled, one admin user and one API key; prints JSON."""
    try:
        with transaction():
            result = billing.open_account(
                name=name, email=email, password=password, credit=credit, sandbox=not live,
                products=[p.strip() for p in products.split(",") if p.strip()] if products is not None else None)
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(result))


@accounts_cli.command("list")
def list_accounts() -> None:
    for account in db.session.scalars(select(Account).order_by(Account.id)):
        click.echo(json.dumps({"account_uuid": str(account.uuid), "name": account.name,
                               "sandbox": account.is_sandbox, "credit": account.credit_balance}))


@accounts_cli.command("create-user")
@click.option("--account", "account_uuid", required=True)
@click.option("--email", required=True)
@click.option("--password", required=True)
@click.option("--role", type=click.Choice(["admin", "analyst", "viewer"]), default="analyst", show_default=True)
def create_user(account_uuid: str, email: str, password: str, role: str) -> None:
    try:
        with transaction():
            account = _account(account_uuid)
            user = accounts.create_user(accounts.cli_actor(account), email=email, password=password, role=role)
            out = {"user_uuid": str(user.uuid), "email": user.email, "role": user.role}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("create-key")
@click.option("--account", "account_uuid", required=True)
@click.option("--label", required=True)
def create_key(account_uuid: str, label: str) -> None:
    try:
        with transaction():
            account = _account(account_uuid)
            key, secret = accounts.create_api_key(accounts.cli_actor(account), label=label)
            out = {"api_key_uuid": str(key.uuid), "label": key.label, "api_key": secret}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("revoke-key")
@click.option("--account", "account_uuid", required=True)
@click.option("--key", "key_uuid", required=True)
def revoke_key(account_uuid: str, key_uuid: str) -> None:
    try:
        with transaction():
            account = _account(account_uuid)
            key = accounts.revoke_api_key(accounts.cli_actor(account), _uuid(key_uuid))
            out = {"api_key_uuid": str(key.uuid), "revoked_at": key.revoked_at.isoformat()}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("add-credit")
@click.option("--account", "account_uuid", required=True)
@click.option("--amount", type=int, required=True)
@click.option("--reason", default="Top-up", show_default=True)
def add_credit(account_uuid: str, amount: int, reason: str) -> None:
    try:
        with transaction():
            account = _account(account_uuid)
            billing.top_up(accounts.cli_actor(account), amount, reason)
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps({"account_uuid": account_uuid, "credit": accounts.credit_balance(account.id)}))


@accounts_cli.command("set-rate-limit")
@click.option("--account", "account_uuid", required=True)
@click.option("--per-minute", type=int, help="API requests a minute for each of the account's keys.")
@click.option("--default", "use_default", is_flag=True, help="Remove the override: DEFAULT_API_RATE_LIMIT applies.")
def set_rate_limit(account_uuid: str, per_minute: int | None, use_default: bool) -> None:
    """Override one account's API budget (shared by all its endpoints, per key)."""
    if (per_minute is None) != use_default:
        click.echo("Error: give either --per-minute N or --default", err=True)
        sys.exit(2)
    try:
        with transaction():
            account = _account(account_uuid)
            accounts.set_rate_limit(accounts.cli_actor(account), per_minute=per_minute)
            out = {"account_uuid": account_uuid, "rate_limit_per_minute": account.rate_limit_per_minute,
                   "effective_per_minute": account.rate_limit_per_minute
                   or current_app.config["DEFAULT_API_RATE_LIMIT"]}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("entitle")
@click.option("--account", "account_uuid", required=True)
@click.option("--product", required=True, help="A check type, idpass, or an ID type (docs/idchecks.md).")
@click.option("--revoke", is_flag=True, help="Withdraw the product instead of granting it.")
def entitle(account_uuid: str, product: str, revoke: bool) -> None:
    """Grant (or --revoke) one product for an account."""
    try:
        with transaction():
            account = _account(account_uuid)
            accounts.set_entitlement(accounts.cli_actor(account), product, not revoke)
            out = {"account_uuid": account_uuid, "products": accounts.entitlements(account)}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("add-oac")
@click.option("--account", "account_uuid", required=True)
@click.option("--code", required=True, help="The DVS identity's code (OAC).")
@click.option("--requester-name", required=True, help="The organisation's name shown to the person and issuers.")
@click.option("--privacy-policy-url", default=None, help="https:// address of the privacy policy (IDPass needs one).")
def add_oac(account_uuid: str, code: str, requester_name: str, privacy_policy_url: str | None) -> None:
    """Add a DVS identity (OAC) to an account: ID checks and IDPasses verify documents under it."""
    try:
        with transaction():
            account = _account(account_uuid)
            identity = accounts.add_dvs_identity(accounts.cli_actor(account), oac_code=code,
                                                 requester_name=requester_name,
                                                 privacy_policy_url=privacy_policy_url)
            out = {"account_uuid": account_uuid, "oac": identity.oac_code, "requester_name": identity.requester_name,
                   "privacy_policy_url": identity.privacy_policy_url}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("set-operator")
@click.option("--account", "account_uuid", required=True)
@click.option("--revoke", is_flag=True, help="The account is no longer the operator's.")
def set_operator(account_uuid: str, revoke: bool) -> None:
    """Make an account the platform operator's: its admins set the prices of every account in the portal."""
    try:
        with transaction():
            account = _account(account_uuid)
            account.is_operator = not revoke
            out = {"account_uuid": account_uuid, "is_operator": account.is_operator}
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps(out))


@accounts_cli.command("seed-demo")
@click.option("--email", default="demo@example.com", show_default=True)
@click.option("--password", default="demo-password-1", show_default=True)
def seed_demo(email: str, password: str) -> None:
    """Create the demo account once (idempotent) and print its login and a fresh API key."""
    from app.accounts.models import User
    user = db.session.scalar(select(User).where(User.email == email))
    with transaction():
        if user is None:
            result = billing.open_account(name="Demo Compliance Pty Ltd", email=email, password=password,
                                                credit=10_000)
            from app.demo import seed_demo_data
            _account(result["account_uuid"]).is_operator = True  # the demo runs the whole platform: prices too
            seed_demo_data(result["account_uuid"])
        else:
            # A key's secret is shown once and never stored, so the earlier demo keys cannot be printed again:
            # revoke them, so that only the key printed now works.
            actor = accounts.cli_actor(user.account)
            for old in accounts.list_api_keys(actor):
                if old.revoked_at is None and old.label in ("Default key", "make run"):
                    accounts.revoke_api_key(actor, old.uuid)
            key, secret = accounts.create_api_key(actor, label="make run")
            result = {"account_uuid": str(user.account.uuid), "user_email": email, "api_key": secret}
    click.echo(json.dumps({**result, "password": password}))


@jobs_cli.command("worker")
@click.option("--queue", "queues", multiple=True, help="Queues to listen on (default: all).")
@click.option("--burst", is_flag=True, help="Stop when the queues are empty.")
@click.option("--worker-class", type=click.Choice(["fork", "simple"]), default=None,
              help="fork: a work horse per job (isolation; the default, RQ_WORKER_CLASS), except for the jobs of "
                   "RQ_INLINE_QUEUES (checks), run in the worker process; simple: every job runs in the worker "
                   "process itself (no fork cost).")
@click.option("--heavy", "role", flag_value="heavy",
              help="A heavy worker: the queues of heavy work (pdf, imports), at OS priority HEAVY_WORKER_NICE.")
@click.option("--background", "role", flag_value="background",
              help="A background worker: the queues of bulk background work (monitors: a run's chunks).")
@click.option("--light", "role", flag_value="light", help="Every queue but the heavy and the background ones.")
def worker(queues: tuple[str, ...], burst: bool, worker_class: str | None, role: str | None) -> None:
    """Run an RQ worker (needs REDIS_URL)."""
    import os

    from app.jobs import BACKGROUND_QUEUES, HEAVY_QUEUES, QUEUES, run_worker
    if not current_app.config.get("REDIS_URL"):
        click.echo("Error: REDIS_URL is not set; without Redis jobs run in-process.", err=True)
        sys.exit(2)
    names = list(queues) or None
    if role == "heavy":
        names = list(HEAVY_QUEUES)
        nice = int(current_app.config["HEAVY_WORKER_NICE"])
        if nice > 0:
            os.nice(nice)  # the web (and the light workers) come first on a busy CPU
    elif role == "background":
        names = list(BACKGROUND_QUEUES)  # each chunk's work horse lowers its own priority (BACKGROUND_JOB_NICE)
    elif role == "light":
        names = [q for q in QUEUES if q not in HEAVY_QUEUES and q not in BACKGROUND_QUEUES]
    run_worker(current_app._get_current_object(), names, burst=burst,
               kind=worker_class or current_app.config.get("RQ_WORKER_CLASS", "fork"))


@jobs_cli.command("scheduler")
def scheduler() -> None:
    """Run the scheduler that enqueues recurring jobs (needs REDIS_URL)."""
    from app.jobs import build_scheduler
    if not current_app.config.get("REDIS_URL"):
        click.echo("Error: REDIS_URL is not set.", err=True)
        sys.exit(2)
    from app.health import database_warnings
    for warning in database_warnings():
        click.echo(f"Warning: {warning}", err=True)
    build_scheduler(current_app._get_current_object()).start()


@jobs_cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of text.")
def status(as_json: bool) -> None:
    """Each queue: the jobs waiting and the live workers that take it (and those whose process on this machine ended
    without deregistering: killed). Exits 1 when a queue has no live worker (its jobs would never run: run the role
    that serves it, e.g. `flask jobs worker --background` for monitors)."""
    from app.jobs import queue_status
    if not current_app.config.get("REDIS_URL"):
        click.echo("Error: REDIS_URL is not set; without Redis jobs run in-process.", err=True)
        sys.exit(2)
    rows = queue_status()
    for row in rows:
        if as_json:
            click.echo(json.dumps(row))
        else:
            gone = f" ({row['gone']} gone: process ended without deregistering)" if row["gone"] else ""
            flag = "" if row["workers"] else "   <- no worker takes this queue"
            click.echo(f"{row['queue']:<12} {row['waiting']:>7} waiting {row['workers']:>3} workers{gone}{flag}")
    if any(not row["workers"] for row in rows):
        sys.exit(1)


@jobs_cli.command("run")
@click.argument("name")
def run(name: str) -> None:
    """Run one job now, in this process, by its name (e.g. purge_soft_deleted; `flask jobs list` names them)."""
    from app.jobs import run_job
    click.echo(json.dumps(run_job(name), default=str))


@jobs_cli.command("list")
def list_jobs() -> None:
    """The registered jobs: name, queue, timeout and schedule (JSON lines)."""
    from app.jobs import registered
    for spec in sorted(registered().values(), key=lambda s: s.name):
        click.echo(json.dumps({"name": spec.name, "queue": spec.queue, "timeout": spec.timeout, "cron": spec.cron,
                                "every": spec.every}))


@jobs_cli.command("failures")
@click.option("--account", "account_uuid", default=None, help="Only this account's jobs (its uuid).")
@click.option("--job", "job_name", default=None, help="Only this job (e.g. send_report_email).")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="JSON lines instead of text.")
@click.option("--purge-days", type=int, default=None, help="First delete failures older than this many days.")
def job_failures(account_uuid: str | None, job_name: str | None, limit: int, as_json: bool,
                 purge_days: int | None) -> None:
    """Failed background jobs, newest first: job, work (its ids), attempts, last error, account (job_failures)."""
    from app.jobs import failures, purge_failures
    if purge_days is not None:
        with transaction():
            click.echo(f"purged {purge_failures(purge_days)} failures older than {purge_days} days", err=True)
    account = _account(account_uuid) if account_uuid else None
    rows = failures(account_id=account.id if account else None, job_name=job_name, limit=limit)
    uuids = dict(db.session.execute(select(Account.id, Account.uuid).where(
        Account.id.in_({r.account_id for r in rows if r.account_id is not None}))).all()) if rows else {}
    for r in rows:
        item = {"job": r.job_name, "work": r.args, "attempts": r.attempts, "last_error": r.last_error,
                "last_failed_at": r.last_failed_at.isoformat(), "first_failed_at": r.first_failed_at.isoformat(),
                "account_uuid": str(uuids[r.account_id]) if r.account_id in uuids else None, "rq_job_id": r.rq_job_id}
        if as_json:
            click.echo(json.dumps(item))
        else:
            error = (r.last_error or "").strip().splitlines()[-1:] or [""]
            click.echo(f"{item['last_failed_at'][:19]}  {r.job_name}{tuple(r.args or ())}  attempts={r.attempts}  "
                       f"account={item['account_uuid'] or '-'}  {error[0][:160]}")
    if not rows and not as_json:
        click.echo("No job failures recorded.")


@credit_cli.command("prices")
def credit_prices() -> None:
    """Print the credits each check type costs (JSON)."""
    from app.billing.services import prices
    click.echo(json.dumps(prices()))


@credit_cli.command("set-price")
@click.option("--type", "check_type", required=True, help="A check type, an ID type, or idpass_1..idpass_3 (IDPass by document steps).")
@click.option("--credits", type=int, required=True)
def credit_set_price(check_type: str, credits: int) -> None:
    """Set the price of one check type for every account (audited on no account: printed as JSON)."""
    from app.billing.models import CheckPrice
    from app.billing.services import prices, set_price
    from app.core.actor import Actor
    operator = Actor(account_id=0, kind="system", id=None, uuid=None, name="cli", role="admin", via="cli")
    try:
        with transaction():
            row = db.session.get(CheckPrice, check_type)
            before = row.credits if row is not None else prices().get(check_type)
            set_price(operator, check_type, credits, audit_change=False)
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps({"check_type": check_type, "credits": [before, credits]}))


@entities_cli.command("generate-synthetic")
@click.option("--program", "program_uuid", required=True, help="The program's uuid.")
@click.option("--count", type=int, required=True, help="How many entities.")
@click.option("--seed", type=int, default=1, show_default=True)
def entities_generate_synthetic(program_uuid: str, count: int, seed: int) -> None:
    """Add COUNT synthetic entities (names and dates of birth of many locales; one in 500 a listed person of the
    loaded lists) to a program, reproducibly for a seed (app/entities/synthetic.py)."""
    from app.entities.synthetic import generate_entities
    from app.programs.models import Program
    program = db.session.scalar(select(Program).where(Program.uuid == _uuid(program_uuid),
                                                      Program.deleted_at.is_(None)))
    if program is None:
        click.echo(f"Error: no program {program_uuid}", err=True)
        sys.exit(2)
    try:
        with transaction():
            n = generate_entities(accounts.cli_actor(db.session.get(Account, program.account_id)), program.uuid,
                                  count, seed)
    except DomainError as exc:
        _fail(exc)
    click.echo(json.dumps({"program_uuid": str(program.uuid), "created": n, "seed": seed}))


def register(app: Flask) -> None:
    app.cli.add_command(credit_cli)
    app.cli.add_command(entities_cli)
    app.cli.add_command(accounts_cli)
    app.cli.add_command(jobs_cli)
    screening_cli.register(app)  # flask lists ..., flask screening ...
    lists_cli.register(screening_cli.lists_cli)  # flask lists accept|reject (the operator's decision)
