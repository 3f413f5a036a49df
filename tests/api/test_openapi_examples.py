"""Every request body and response of the OpenAPI document has an example, and each example is valid for the
model it illustrates (so the examples cannot drift from the schemas)."""
from __future__ import annotations

import pytest

from app.api.examples import EXAMPLES


def _models(app):
    with app.app_context():
        models = {}
        for rule in app.url_map.iter_rules():
            meta = getattr(app.view_functions[rule.endpoint], "openapi", None)
            if meta:
                for key in ("body", "response"):
                    if meta[key] is not None:
                        models[meta[key].__name__] = (key, meta[key])
        return models


def test_every_schema_of_the_document_has_an_example(app):
    missing = sorted(set(_models(app)) - set(EXAMPLES))
    assert not missing, f"add examples for {missing} to app/api/examples.py"


def test_examples_are_valid_for_their_models(app):
    from app.entities.schemas import validate_entity
    for name, (kind, model) in _models(app).items():
        sample = EXAMPLES[name]
        if name == "EntityIn":
            validate_entity(sample)
        else:
            model.model_validate(sample)


def test_the_document_carries_the_examples(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():  # JSON, the CSV upload (multipart and text/csv)
                assert "example" in content, (method, path, media)
            for code, response in op["responses"].items():
                for media, content in response.get("content", {}).items():  # JSON and the PDF reports
                    assert "example" in content, (method, path, code, media)


def test_the_check_launches_link_the_check_they_start(client):
    """OpenAPI links: the launch's `data.uuid` opens the check and its PDF (and drives schemathesis' stateful
    phase)."""
    doc = client.get("/api/v1/openapi.json").get_json()
    for path, show, parameter in (("/entities/{entity_uuid}/checks", "show_check", "check_uuid"),
                                  ("/adhoc-checks", "show_adhoc_check", "adhoc_check_uuid")):
        links = doc["paths"][path]["post"]["responses"]["202"]["links"]
        assert links[f"{show}_get"] == {"operationId": show, "parameters": {parameter: "$response.body#/data/uuid"}}
        assert {link["operationId"] for link in links.values()} >= {show, show.replace("show_", "") + "_report_pdf"}


@pytest.mark.parametrize("code", [400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 503])
def test_error_examples_follow_the_error_body(code):
    from app.api.examples import ERROR_EXAMPLES
    example = ERROR_EXAMPLES[code]
    assert example["message"] and (set(example) <= {"message", "errors"})


def test_the_monitor_examples_configs_are_valid_options(app):
    """A monitor's `config` is validated by its check type's options (not by the body's model): the examples of
    the monitor and program-run bodies must pass that validation too (a threshold is 10, 20, ... 100)."""
    from app.monitors.schemas import ProgramRunRequest
    from app.monitors.services import resolve_config
    bodies = [EXAMPLES[name] for name in ("MonitorCreate", "MonitorUpdate") if name in EXAMPLES]
    bodies += ProgramRunRequest.model_config["json_schema_extra"]["examples"]
    configs = [body["config"] for body in bodies if body.get("config")]
    assert len(configs) >= 3
    for config in configs:
        assert resolve_config("pep_sanction_check", None, config)
