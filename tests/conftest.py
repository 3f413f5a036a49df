"""Test harness: a PostgreSQL database created for the session (migrated with Alembic), a Redis db index
of its own, and truncation between tests. Nothing is left behind."""
from __future__ import annotations

import os
import uuid

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.factories import Factory

PG_BASE = os.environ.get("TEST_DATABASE_BASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")
REDIS_BASE = os.environ.get("TEST_REDIS_BASE_URL", "redis://127.0.0.1:6379")


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker.startswith("gw") else 0


@pytest.fixture(scope="session")
def database_url():
    name = f"screening_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_BASE, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_BASE).set(database=name).render_as_string(hide_password=False)
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def redis_url():
    # TEST_REDIS_DB lets concurrent suites (several checkouts, xdist workers) keep apart.
    url = f"{REDIS_BASE}/{int(os.environ.get('TEST_REDIS_DB', '8')) + _worker_index()}"
    from redis import Redis
    conn = Redis.from_url(url)
    conn.flushdb()
    yield url
    conn.flushdb()
    conn.close()


@pytest.fixture(scope="session")
def app(database_url, redis_url, tmp_path_factory):
    from flask_migrate import upgrade

    from app import create_app
    from app.config import TestConfig

    application = create_app({
        **{k: getattr(TestConfig, k) for k in dir(TestConfig) if k.isupper()},
        "SQLALCHEMY_DATABASE_URI": database_url,
        "REDIS_URL": redis_url,
        "RATELIMIT_STORAGE_URI": redis_url,
        "RQ_QUEUE_PREFIX": "test:",
        "STORAGE_PATH": str(tmp_path_factory.mktemp("blobs")),
        "SMS_OUTBOX_DIR": str(tmp_path_factory.mktemp("sms-outbox")),
    })
    with application.app_context():
        upgrade()
    yield application
    from app.extensions import db
    with application.app_context():
        db.engine.dispose()


@pytest.fixture(autouse=True)
def _clean(app, redis_url):
    yield
    from redis import Redis

    from app.extensions import db
    with app.app_context():
        db.session.remove()
        # deployment_settings stays: the deployment's key of public numbers, read once per process
        tables = ", ".join(f'"{t.name}"' for t in reversed(db.metadata.sorted_tables)
                           if t.name != "deployment_settings")
        with db.engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
    Redis.from_url(redis_url).flushdb()


@pytest.fixture
def work(app):
    """Run every queued job on a real RQ worker (in this process), until the queues are empty."""
    from rq import SimpleWorker

    from app.jobs import QUEUES, _redis_connection

    def run() -> None:
        with app.app_context():
            names = [app.config["RQ_QUEUE_PREFIX"] + q for q in QUEUES]
            worker = SimpleWorker(names, connection=_redis_connection(app, worker=True))
            worker.work(burst=True, with_scheduler=False)
            return None
    return run


@pytest.fixture
def app_ctx(app):
    with app.app_context():
        yield


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def factory(app):
    return Factory(app)


@pytest.fixture
def tenant(factory):
    """An account with an admin user and an API key; `tenant.api` is a JSON client for it."""
    return factory.tenant()


@pytest.fixture
def other_tenant(factory):
    return factory.tenant(name="Other Corp")
