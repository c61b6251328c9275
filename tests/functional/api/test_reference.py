"""GET /openapi.json: the contract, served without a credential and built once per container."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.api import openapi, reference
from tests.functional.conftest import Api


def test_the_document_is_served_without_a_credential_for_the_stages_issuer(api: Api) -> None:
    answer = api.call("GET", "/openapi.json")

    assert answer.status == 200
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Cache-Control"] == "public, max-age=300"
    assert answer.json["openapi"] == "3.1.0"
    assert answer.json["servers"] == [{"url": api.services.settings.issuer}]
    assert answer.json == openapi.document(api.services.settings.issuer)


def test_the_document_is_built_once_per_container(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str | None] = []
    real = openapi.document

    def counted(server_url: str | None = None) -> dict[str, Any]:
        built.append(server_url)
        return real(server_url)

    monkeypatch.setattr(openapi, "document", counted)
    reference.published_document.cache_clear()

    first = api.call("GET", "/openapi.json")
    second = api.call("GET", "/openapi.json")

    assert first.body == second.body
    assert built == [api.services.settings.issuer]
