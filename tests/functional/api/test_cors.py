"""Cross-origin calls: exact origins from ALLOWED_ORIGINS, preflights for every route, and the
same headers on errors (README, "Calling from a browser")."""

from __future__ import annotations

import copy

import pytest

from tests.functional.conftest import Api
from tests.functional.failures import broken

ALLOWED = "https://app.example.com"
ALSO_ALLOWED = "http://localhost:5173"
FOREIGN = "https://evil.example.net"
WHOAMI = "/v1/auth/whoami"
KEYS = "/v1/auth/api-keys"


def routes() -> list[tuple[str, str]]:
    from app import app

    return sorted(
        (path, method)
        for path, entries in app.routes.items()
        for method in entries
        if method != "OPTIONS"
    )


def concrete(path: str) -> str:
    """A request path for a route path: each `{parameter}` filled with a placeholder."""
    import re

    return re.sub(r"\{[^}]+\}", "placeholder", path)


@pytest.fixture
def cors_api(api: Api) -> Api:
    """The app on a stage whose ALLOWED_ORIGINS lists two origins."""
    settings = copy.replace(api.services.settings, allowed_origins=(ALLOWED, ALSO_ALLOWED))
    vars(api.services)["settings"] = settings  # a cached_property's slot
    return api


def cors_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower().startswith("access-control-")}


@pytest.mark.parametrize("origin", [ALLOWED, ALSO_ALLOWED])
def test_an_allowed_origin_is_echoed_exactly_without_credentials(
    cors_api: Api, alice: str, origin: str
) -> None:
    answer = cors_api.call("GET", WHOAMI, alice, headers={"Origin": origin})

    assert answer.status == 200
    assert answer.headers["Access-Control-Allow-Origin"] == origin
    assert "Origin" in answer.headers["Vary"]
    assert "Access-Control-Allow-Credentials" not in answer.headers
    exposed = answer.headers["Access-Control-Expose-Headers"]
    assert {"Location", "WWW-Authenticate", "Retry-After"} <= set(exposed.split(", "))


@pytest.mark.parametrize(
    "origin",
    [
        FOREIGN,
        "https://app.example.com.evil.example.net",
        "https://APP.example.com",
        "https://app.example.com:443",
        "http://app.example.com",
        "null",
    ],
)
def test_a_foreign_origin_gets_no_cors_headers(cors_api: Api, alice: str, origin: str) -> None:
    answer = cors_api.call("GET", WHOAMI, alice, headers={"Origin": origin})

    assert answer.status == 200
    assert cors_headers(answer.headers) == {}
    assert answer.headers["Vary"] == "Origin"  # caches keep the answers of origins apart


def test_without_allowed_origins_no_origin_gets_cors_headers(api: Api, alice: str) -> None:
    answer = api.call("GET", WHOAMI, alice, headers={"Origin": ALLOWED})

    assert cors_headers(answer.headers) == {}
    assert "Vary" not in answer.headers


def test_a_same_origin_request_without_origin_gets_no_cors_headers(
    cors_api: Api, alice: str
) -> None:
    answer = cors_api.call("GET", WHOAMI, alice)

    assert cors_headers(answer.headers) == {}


@pytest.mark.parametrize(("path", "method"), routes())
def test_preflight_of_each_route_and_method(cors_api: Api, path: str, method: str) -> None:
    answer = cors_api.call(
        "OPTIONS",
        concrete(path),
        headers={
            "Origin": ALLOWED,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type, x-workspace-id",
        },
    )

    assert answer.status == 204
    assert answer.body == b""
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert method in answer.headers["Access-Control-Allow-Methods"].split(", ")
    allowed_headers = answer.headers["Access-Control-Allow-Headers"].lower().split(", ")
    assert {"authorization", "content-type", "x-workspace-id"} <= set(allowed_headers)
    assert int(answer.headers["Access-Control-Max-Age"]) > 0
    assert "Origin" in answer.headers["Vary"]
    assert "Access-Control-Allow-Credentials" not in answer.headers


def test_preflight_lists_only_the_methods_of_the_route(cors_api: Api) -> None:
    answer = cors_api.call(
        "OPTIONS",
        WHOAMI,
        headers={"Origin": ALLOWED, "Access-Control-Request-Method": "DELETE"},
    )

    assert answer.headers["Access-Control-Allow-Methods"] == "GET, OPTIONS"


def test_preflight_from_a_foreign_origin_allows_nothing(cors_api: Api) -> None:
    answer = cors_api.call(
        "OPTIONS", KEYS, headers={"Origin": FOREIGN, "Access-Control-Request-Method": "POST"}
    )

    assert answer.status == 204
    assert cors_headers(answer.headers) == {}


def test_preflight_needs_no_credential_and_reads_nothing(
    cors_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cors_api.services.dynamodb, "get_item", broken)
    answer = cors_api.call(
        "OPTIONS", KEYS, headers={"Origin": ALLOWED, "Access-Control-Request-Method": "POST"}
    )

    assert answer.status == 204
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED


@pytest.mark.parametrize(
    ("method", "path", "credential", "status"),
    [
        ("GET", WHOAMI, None, 401),
        ("GET", WHOAMI, "not-a-key", 401),
        ("GET", KEYS + "/key_00000000000000000000000000", "alice", 404),
        ("PUT", WHOAMI, "alice", 405),
        ("POST", KEYS, "alice", 400),
    ],
)
def test_errors_carry_the_cors_headers(
    cors_api: Api, alice: str, method: str, path: str, credential: str | None, status: int
) -> None:
    sent = alice if credential == "alice" else credential
    answer = cors_api.call(method, path, sent, raw=b"{", headers={"Origin": ALLOWED})

    assert answer.status == status
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "WWW-Authenticate" in answer.headers["Access-Control-Expose-Headers"]


def test_a_failed_dependency_answer_carries_the_cors_headers(
    cors_api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = cors_api.create_key(alice)
    monkeypatch.setattr(cors_api.services.dynamodb, "get_item", broken)
    answer = cors_api.call("GET", WHOAMI, key["key"], headers={"Origin": ALLOWED})

    assert answer.status == 503
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED


def test_an_oauth_error_of_the_token_endpoints_carries_the_cors_headers(cors_api: Api) -> None:
    answer = cors_api.call(
        "POST", "/v1/auth/refresh", body={"refresh_token": "unknown"}, headers={"Origin": ALLOWED}
    )

    assert answer.status == 400
    assert answer.json["error"] == "invalid_grant"
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED


def test_a_created_key_answer_exposes_its_location(cors_api: Api, alice: str) -> None:
    answer = cors_api.call(
        "POST", KEYS, alice, body={"label": "browser"}, headers={"Origin": ALLOWED}
    )

    assert answer.status == 201
    assert answer.headers["Access-Control-Allow-Origin"] == ALLOWED
    assert "Location" in answer.headers["Access-Control-Expose-Headers"]
