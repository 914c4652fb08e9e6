"""``GET /rest/_openapi``: a valid OpenAPI 3.1 document, and a real server that keeps to it.

The schemathesis run sends generated requests (derandomized, so the same ones every run;
``SCHEMATHESIS_EXAMPLES`` per operation, 60 under ``CI=true`` (some 1,200 requests over
20 operations, 240 to the four operations of ``/rest/people/{id}``; 100 took 78 s on the
shared 2-core machine), 25 otherwise) to a real ``docbase serve`` over HTTPS and checks
that none answers 5xx and that every answer's status, content type and body fit the
document.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from openapi_spec_validator import validate
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from docbase.core.schema import FieldType, parse_schema
from docbase.core.schema.openapi import openapi_document
from tests.backends import IN_CI
from tests.test_serve_harness import Served, serving

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES") or (60 if IN_CI else 25))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]

PEOPLE = {"fields": [
    {"name": "name", "type": "text", "required": True, "max": 40},
    {"name": "bio", "type": "textarea"},
    {"name": "age", "type": "number", "min": 0, "max": 150},
    {"name": "height", "type": "float_number"},
    {"name": "salary", "type": "money"},
    {"name": "active", "type": "bool", "default": True},
    {"name": "born", "type": "date"},
    {"name": "seen", "type": "datetime"},
    {"name": "wakes", "type": "time"},
    {"name": "email", "type": "email", "unique": True},
    {"name": "site", "type": "url"},
    {"name": "extra", "type": "json"},
    {"name": "level", "type": "option", "options": ["gold", "silver"]},
    {"name": "tags", "type": "tags", "max": 5},
    {"name": "photo", "type": "image"},
    {"name": "cv", "type": "file"},
    {"name": "orders", "type": "child"},
    {"name": "manager", "type": "lookup", "collection": "people"},
    {"name": "secret", "type": "password"},
]}
ORDERS = {"fields": [{"name": "qty", "type": "number", "required": True, "min": 1}]}


def test_every_field_type_is_in_the_example() -> None:
    assert {f["type"] for f in PEOPLE["fields"]} == {t.value for t in FieldType}


def test_the_generated_document_is_valid_openapi_3_1() -> None:
    schemas = {"people": parse_schema("people", PEOPLE), "orders": parse_schema("orders", ORDERS)}
    for strict in (False, True):
        document = openapi_document("main", schemas, strict=strict)
        validate(document)
        assert document["openapi"] == "3.1.0"
    people = document["components"]["schemas"]["peopleInput"]
    assert people["required"] == ["name"]
    assert people["additionalProperties"] is False
    assert people["properties"]["age"]["anyOf"][0] == {"type": "integer", "minimum": 0,
                                                       "maximum": 150}
    assert people["properties"]["secret"]["anyOf"][0]["writeOnly"] is True
    assert "orders" not in people["properties"]
    assert "/rest/people/{id}/orders" in document["paths"]
    assert "secret" not in document["components"]["schemas"]["people"]["properties"]
    assert set(document["components"]["securitySchemes"]) == {"apikey", "apikeyQuery",
                                                              "bearer", "jwtQuery"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    # no password field here: hashing one costs tens of ms per created document
    people = {"fields": [f for f in PEOPLE["fields"] if f["type"] != "password"]}
    with serving(tmp_path_factory.mktemp("openapi")) as server:
        for name, schema in (("people", people), ("orders", ORDERS)):
            answer = server.request("PUT", f"/rest/{name}/_meta", key=server.admin_key,
                                    json=schema)
            assert answer.status_code == 200, answer.text
        yield server


@pytest.fixture(scope="module")
def document(served: Served) -> dict[str, Any]:
    response = served.request("GET", "/rest/_openapi", key=served.admin_key)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_the_served_document_is_valid_and_names_every_collection(
        document: dict[str, Any]) -> None:
    validate(document)
    assert {"/rest/people", "/rest/people/{id}", "/rest/people/_meta", "/rest/orders",
            "/rest/people/{id}/orders", "/rest/_meta", "/rest/_openapi", "/batch"} <= set(
                document["paths"])
    assert document["paths"]["/batch"]["post"]["operationId"] == "batch"  # fuzzed below


def test_the_openapi_document_needs_a_key(served: Served) -> None:
    assert served.request("GET", "/rest/_openapi").status_code == 401


def test_generated_requests_get_no_5xx_and_answers_fit_the_document(
        served: Served, document: dict[str, Any]) -> None:
    schema = schemathesis.openapi.from_dict(document)
    headers = {"x-apikey": served.admin_key}
    session = requests.Session()  # one TLS connection kept for every request
    certificate = str(served.data_dir / "cert.pem")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    sent = 0
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  phases=[Phase.explicit, Phase.generate],
                  suppress_health_check=list(HealthCheck))
        def run(case: Any) -> None:
            nonlocal sent
            response = case.call(base_url=served.url, session=session, headers=headers,
                                 verify=certificate, timeout=30)
            sent += 1
            case.validate_response(response, checks=CHECKS)

        run()
    session.close()
    assert sent >= len(operations) * min(EXAMPLES, 10)
