"""Blueprint("api", url_prefix="/api/v1"): one thin module per domain."""
from app.api.base import bp  # noqa: F401
from app.api import openapi, programs  # noqa: F401,E402
from app.api import notes  # noqa: F401,E402
from app.api import entities  # noqa: F401,E402
from app.api import checks, credit, events  # noqa: F401,E402
from app.api import lists, monitors  # noqa: F401,E402
from app.api import idchecks  # noqa: F401,E402
from app.api import idpass  # noqa: F401,E402
from app.api import webhooks  # noqa: F401,E402
from app.api import jobs  # noqa: F401,E402
