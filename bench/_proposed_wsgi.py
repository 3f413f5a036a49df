"""gunicorn entry point for `bench/api_latency.py --proposed`: the app with the proposed list queries."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _proposed  # noqa: E402
from wsgi import app  # noqa: E402,F401

_proposed.patch()
