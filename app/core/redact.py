"""Secrets that travel in URLs, kept out of the logs: the IDPass link's token (`/v/<token>`) is a bearer secret for a
person's identity documents, and access logs (werkzeug's, gunicorn's) write every request line. `SecretPathFilter`
rewrites `/v/<token>` as `/v/[token]` in a record's message and arguments (a tuple, or gunicorn's dict of atoms)."""
from __future__ import annotations

import logging
import re

SECRET_PATH = re.compile(r"(/v/)[A-Za-z0-9_\-]{8,}")
ACCESS_LOGGERS = ("werkzeug", "gunicorn.access")


def redact(text: str) -> str:
    return SECRET_PATH.sub(r"\1[token]", text)


class SecretPathFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        return True


def install() -> None:
    """Attach the filter to the access loggers (once)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretPathFilter) for f in logger.filters):
            logger.addFilter(SecretPathFilter())
