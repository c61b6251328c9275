"""`/dashboard/`: the built files with the page's security headers, and its sign-in settings.

The files are stand-ins written by each test (the real build is exercised by the browser
tests); what is under test is how the service serves them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chalicelib import runtime
from chalicelib.config import TrustedIssuer
from chalicelib.dashboard import assets
from chalicelib.runtime import Services
from tests.functional.conftest import Api

ISSUER = "https://login.example.test"
CLIENT_ID = "dashboard-client"
PAGE = '<!doctype html><title>t</title><script type="module" src="app-ABCD2345.js"></script>'


@pytest.fixture
def static(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "index.html").write_text(PAGE)
    (tmp_path / "app-ABCD2345.js").write_text("console.log(1)")
    (tmp_path / "styles-WXYZ2345.css").write_text("body{}")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    (tmp_path / "notes.py").write_text("secret = 1")
    monkeypatch.setattr(assets, "STATIC_DIR", tmp_path)
    return tmp_path


def configure(api: Api, dashboard_login: object, trusted: tuple[TrustedIssuer, ...]) -> None:
    settings = copy.replace(
        api.services.settings,
        dashboard_login=dashboard_login
        if isinstance(dashboard_login, str)
        else json.dumps(dashboard_login),
        trusted_issuers=trusted,
    )
    runtime.use(Services(settings, api.services.clock))


@pytest.fixture
def login(api: Api, static: Path) -> Iterator[Api]:
    configure(
        api,
        {"issuer": ISSUER, "clientId": CLIENT_ID},
        (TrustedIssuer(ISSUER, CLIENT_ID, f"{ISSUER}/jwks"),),
    )
    yield api


def directives(answer) -> dict[str, str]:
    policy = answer.headers["Content-Security-Policy"]
    return {part.split(" ", 1)[0]: part.split(" ", 1)[1] for part in policy.split("; ")}


def assert_page_headers(answer) -> None:
    csp = directives(answer)
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in answer.headers["Content-Security-Policy"]
    assert "unsafe-eval" not in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert answer.headers["X-Frame-Options"] == "DENY"


def test_the_page_has_a_strict_policy_that_lets_it_call_only_the_api_and_the_provider(
    login: Api,
) -> None:
    answer = login.call("GET", "/dashboard/")

    assert answer.status == 200
    assert answer.body.decode() == PAGE
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    assert answer.headers["Cache-Control"] == "no-cache"
    assert_page_headers(answer)
    assert directives(answer)["connect-src"] == f"'self' {ISSUER}"


def test_head_of_the_page_is_200_with_its_headers_and_no_body(login: Api) -> None:
    answer = login.call("HEAD", "/dashboard/")

    assert answer.status == 200
    assert answer.body == b""
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    assert_page_headers(answer)


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("app-ABCD2345.js", "text/javascript; charset=utf-8"),
        ("styles-WXYZ2345.css", "text/css; charset=utf-8"),
    ],
)
def test_hashed_files_are_cached_for_good_with_their_type(
    login: Api, name: str, content_type: str
) -> None:
    answer = login.call("GET", f"/dashboard/{name}")

    assert answer.status == 200
    assert answer.headers["Content-Type"] == content_type
    assert answer.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert_page_headers(answer)


def test_a_file_without_a_hash_is_revalidated(login: Api) -> None:
    answer = login.call("GET", "/dashboard/favicon.svg")
    assert (answer.status, answer.headers["Content-Type"]) == (200, "image/svg+xml")
    assert answer.headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize(
    "name", ["missing-ABCD2345.js", "notes.py", ".env", "index.html.bak", "..", "a..js"]
)
def test_only_built_files_of_known_types_are_served(login: Api, name: str) -> None:
    answer = login.call("GET", f"/dashboard/{name}")
    assert answer.status == 404
    assert answer.code == "not_found"


def test_the_page_without_its_slash_is_redirected_relative_to_it(login: Api) -> None:
    answer = login.call("GET", "/dashboard")
    assert answer.status == 301
    # Relative, so that a stage's path prefix (/v1api/dashboard -> /v1api/dashboard/) stays.
    assert answer.headers["Location"] == "dashboard/"


def test_config_names_the_provider_and_nothing_else(login: Api) -> None:
    answer = login.call("GET", "/dashboard/config.json")
    assert answer.status == 200
    assert answer.json == {"login": {"issuer": ISSUER, "clientId": CLIENT_ID}}
    assert_page_headers(answer)


def test_without_dashboard_login_the_page_says_so_and_may_call_only_the_api(
    api: Api, static: Path
) -> None:
    configure(api, "", ())
    config = api.call("GET", "/dashboard/config.json")
    page = api.call("GET", "/dashboard/")

    assert config.json == {"login": None}
    assert directives(page)["connect-src"] == "'self'"


def test_a_provider_the_exchange_does_not_trust_is_named_and_the_page_still_loads(
    api: Api, static: Path
) -> None:
    configure(api, {"issuer": ISSUER, "clientId": CLIENT_ID}, ())

    config = api.call("GET", "/dashboard/config.json")
    page = api.call("GET", "/dashboard/")

    assert config.status == 503
    assert config.code == "dashboard_not_configured"
    assert "TRUSTED_ISSUERS" in config.json["detail"]
    assert page.status == 200
    assert directives(page)["connect-src"] == "'self'"


def test_a_token_endpoint_elsewhere_may_be_called_too(api: Api, static: Path) -> None:
    configure(
        api,
        {"issuer": ISSUER, "clientId": CLIENT_ID, "tokenEndpoint": "https://tokens.example.test/t"},
        (TrustedIssuer(ISSUER, CLIENT_ID, f"{ISSUER}/jwks"),),
    )
    page = api.call("GET", "/dashboard/")
    assert directives(page)["connect-src"] == f"'self' {ISSUER} https://tokens.example.test"


def test_an_unbuilt_dashboard_says_how_to_build_it(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assets, "STATIC_DIR", tmp_path / "nothing")
    answer = api.call("GET", "/dashboard/")
    assert answer.status == 404
    assert "make dashboard" in answer.json["detail"]


def test_the_dashboard_needs_no_credential_and_ignores_one(login: Api, alice: str) -> None:
    assert login.call("GET", "/dashboard/").status == 200
    assert login.call("GET", "/dashboard/", credential=alice).status == 200
