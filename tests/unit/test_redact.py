"""IDPass link tokens are kept out of the access logs (werkzeug's request line, gunicorn's atoms)."""
import logging

from app.core.redact import SecretPathFilter, redact


def test_a_link_token_is_redacted_wherever_it_appears():
    token = "O1Lb6RSMjZtViLOT3MNSi6nsbae49384"
    assert redact(f'"GET /v/{token}/selfie HTTP/1.1" 200') == '"GET /v/[token]/selfie HTTP/1.1" 200'
    assert redact("/verify/ABCD-EFGH") == "/verify/ABCD-EFGH"  # a certificate code is meant to be shared
    record = logging.LogRecord("werkzeug", logging.INFO, __file__, 1, '%s - "%s" %s',
                               ("127.0.0.1", f"GET /v/{token} HTTP/1.1", "200"), None)
    SecretPathFilter().filter(record)
    assert token not in record.getMessage() and "/v/[token]" in record.getMessage()
    atoms = logging.LogRecord("gunicorn.access", logging.INFO, __file__, 1, "%(r)s", None, None)
    atoms.args = {"r": f"POST /v/{token}/consent HTTP/1.1", "s": 303}
    SecretPathFilter().filter(atoms)
    assert token not in atoms.getMessage()


def test_the_app_installs_it_on_the_access_loggers(app):
    assert any(isinstance(f, SecretPathFilter) for f in logging.getLogger("werkzeug").filters)
    assert any(isinstance(f, SecretPathFilter) for f in logging.getLogger("gunicorn.access").filters)
