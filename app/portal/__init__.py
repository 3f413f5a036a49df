"""The analyst portal: server-rendered pages with htmx fragments. One thin module per domain."""
from flask import Blueprint

bp = Blueprint("portal", __name__)

from app.portal import auth  # noqa: E402,F401
