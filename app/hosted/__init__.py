"""The hosted pages: what a person reaches without an account. The IDPass flow at its link (`/v/<token>`, the
person's phone: `flow_routes`) and the public verification of a certificate (`/verify/<code>`: `verify`). Thin, like
every door: the IDPass services do the work. Templates under templates/hosted/, styles and scripts under
static/hosted/; no third-party resource, the app's CSP."""
from flask import Blueprint

bp = Blueprint("hosted", __name__)

from app.hosted import flow_routes, verify  # noqa: E402,F401
