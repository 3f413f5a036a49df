"""One commit per request/job, in one place; side effects released only after the commit."""
from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Callable, Iterator

from app.extensions import db

log = logging.getLogger(__name__)
_KEY = "after_commit_callbacks"


def after_commit(fn: Callable[[], None]) -> None:
    """Record a side effect (enqueue, e-mail, SMS) to run once the current transaction commits."""
    db.session.info.setdefault(_KEY, []).append(fn)


def discard_side_effects() -> None:
    db.session.info.pop(_KEY, None)


def commit() -> None:
    """Commit the session, then release the recorded side effects. On failure, roll back and drop them."""
    try:
        db.session.commit()
    except Exception:
        db.session.rollback()
        discard_side_effects()
        raise
    callbacks = db.session.info.pop(_KEY, [])
    for fn in callbacks:
        try:
            fn()
        except Exception:  # a side effect must not undo a committed request
            log.exception("after-commit side effect failed")


def rollback() -> None:
    db.session.rollback()
    discard_side_effects()


@contextmanager
def transaction() -> Iterator[None]:
    """The transaction helper used by the API, the portal, jobs and CLI commands."""
    try:
        yield
    except BaseException:
        rollback()
        raise
    commit()
