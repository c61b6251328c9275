"""The published reference over HTTP: the OpenAPI document and the error page that every
problem's `type` resolves to."""

from __future__ import annotations

from urllib.parse import urljoin

from openapi_spec_validator import validate

from tests.e2e.conftest import Stack


def test_the_openapi_document_is_served_without_auth_and_valid(stack: Stack) -> None:
    answer = stack.call("GET", "/openapi.json")

    assert answer.status_code == 200
    spec = answer.json()
    validate(spec)
    assert spec["servers"] == [{"url": stack.endpoint}]


def test_a_problem_type_resolves_to_its_entry_in_the_error_page(stack: Stack) -> None:
    problem = stack.call("GET", "/v1/auth/whoami").json()
    page_url = urljoin(stack.endpoint + "/v1/auth/whoami", problem["type"])

    page = stack.http.get(page_url.split("#", 1)[0])

    assert page.status_code == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert f'id="{problem["code"]}"' in page.text
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
