"""The public verification of IDPass certificates, without an account: `/verify` (a form to type a code),
`/verify/<code>` (is it genuine: who issued it, when, for which requester, and the SHA-256 of the file issued and of
its content; nothing of the content: no name of the person, no verdict, no document) and a PDF uploaded to
`/verify/<code>` (is this file the one issued, byte for byte).

A code is forgiving as typed (case, dashes and spaces, O for 0, I or L for 1: `reports.normalise_code`); an unknown
one is a plain 404 page. Every look-up, shown or uploaded, counts against one budget per address
(VERIFY_RATE_LIMIT, 30 per minute by default), so that 80-bit codes cannot be enumerated."""
from __future__ import annotations

import hashlib
from functools import wraps

from flask import current_app, redirect, render_template, request, url_for
from flask_limiter.errors import RateLimitExceeded

from app import reports
from app.extensions import limiter
from app.hosted import bp

UPLOAD_MAX_BYTES = 5 * 1024 * 1024
TEMPLATE = "hosted/verify.html"


def _limit() -> str:
    return current_app.config.get("VERIFY_RATE_LIMIT", "30 per minute")


def _throttled(view):
    """The shared per-address budget of the look-ups; past it, a 429 page of our own (not the portal's)."""
    limited = limiter.shared_limit(_limit, scope="certificate-verify",
                                   key_func=lambda: f"verify:{request.remote_addr}")(view)

    @wraps(view)
    def wrapped(*args, **kwargs):
        try:
            return limited(*args, **kwargs)
        except RateLimitExceeded:
            return _page("throttled", 429, headers={"Retry-After": "60"})
    return wrapped


def _page(state: str, status: int = 200, *, headers: dict | None = None, **context):
    html = render_template(TEMPLATE, state=state, product=reports.PRODUCT, **context)
    return html, status, {"Cache-Control": "no-store", "X-Robots-Tag": "noindex", **(headers or {})}


@bp.get("/verify")
def verify_form():
    typed = (request.args.get("code") or "").strip()
    if not typed:
        return _page("form")
    code = reports.normalise_code(typed)
    if code is None:
        return _page("form", 400, typed=typed[:64],
                     error="A verification code has 16 letters and digits, like 7KQ2-M9XA-4RB8-PC3D.")
    return redirect(url_for("hosted.verify_code", code=reports.format_code(code)), 303)


@bp.get("/verify/<string:code>")
@_throttled
def verify_code(code: str):
    record = reports.certificate_record(code)
    if record is None:
        return _page("unknown", 404, typed=code[:64])
    return _page("genuine", record=record)


@bp.post("/verify/<string:code>")
@_throttled
def verify_upload(code: str):
    record = reports.certificate_record(code)
    if record is None:
        return _page("unknown", 404, typed=code[:64])
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _page("genuine", 400, record=record, error="Choose the certificate's PDF file to compare.")
    data = upload.stream.read(UPLOAD_MAX_BYTES + 1)
    if len(data) > UPLOAD_MAX_BYTES:
        return _page("genuine", 413, record=record,
                     error=f"The file is larger than {UPLOAD_MAX_BYTES // (1024 * 1024)} MB: it is not a certificate "
                           "issued under this code.")
    outcome, earlier = reports.compare_certificate(record, data)
    return _page("genuine", record=record, outcome=outcome, earlier=earlier, filename=upload.filename[:120],
                 uploaded_sha256=hashlib.sha256(data).hexdigest())
