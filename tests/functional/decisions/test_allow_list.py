"""IP allow-lists (`allowedCidrs`): 403 `ip_not_allowed` from outside, by the routes (the
request's source address) and by the data-plane authorizer (`requestContext.identity`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from chalice.local import LambdaEventConverter

from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
MEMORY = "/v1/memory/items"
FIXTURE_SOURCE = "203.0.113.10"  # the source address of the authorizer event fixture


@pytest.fixture
def source(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Makes the test client's requests come from another address (127.0.0.1 otherwise)."""

    def use(address: str) -> None:
        monkeypatch.setattr(LambdaEventConverter, "LOCAL_SOURCE_IP", address)

    return use



def effect(answer: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return answer["policyDocument"]["Statement"][0]["Effect"], answer["context"]


def test_a_request_from_inside_the_list_passes_and_from_outside_is_403(
    api: Api, alice: str
) -> None:
    inside = api.create_key(alice, allowedCidrs=["127.0.0.0/8"])
    outside = api.create_key(alice, allowedCidrs=["10.0.0.0/8", "192.168.0.0/16"])

    passed = api.call("GET", WHOAMI, inside["key"])
    refused = api.call("GET", WHOAMI, outside["key"])

    assert passed.status == 200
    assert (refused.status, refused.code) == (403, "ip_not_allowed")
    assert refused.headers.get("WWW-Authenticate") is None


def test_ipv6_sources_are_checked_against_ipv6_networks(
    api: Api, alice: str, source: Callable[[str], None]
) -> None:
    key = api.create_key(alice, allowedCidrs=["2001:db8::/32"])

    source("2001:db8::5")
    inside = api.call("GET", WHOAMI, key["key"])
    source("2001:db9::5")
    outside = api.call("GET", WHOAMI, key["key"])

    assert inside.status == 200
    assert outside.code == "ip_not_allowed"


def test_an_ipv4_mapped_ipv6_source_matches_its_ipv4_network(
    api: Api, alice: str, source: Callable[[str], None]
) -> None:
    key = api.create_key(alice, allowedCidrs=["198.51.100.0/24"])
    source("::ffff:198.51.100.7")

    assert api.call("GET", WHOAMI, key["key"]).status == 200


def test_without_allowed_cidrs_any_address_passes(
    api: Api, alice: str, source: Callable[[str], None]
) -> None:
    key = api.create_key(alice)
    source("198.51.100.99")

    assert api.call("GET", WHOAMI, key["key"]).status == 200


def test_an_allow_list_set_by_patch_applies_to_the_very_next_request(
    api: Api, alice: str
) -> None:
    key = api.create_key(alice)
    assert api.call("GET", WHOAMI, key["key"]).status == 200

    api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"allowedCidrs": ["10.0.0.0/8"]})
    refused = api.call("GET", WHOAMI, key["key"])
    api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"allowedCidrs": None})
    allowed = api.call("GET", WHOAMI, key["key"])

    assert refused.code == "ip_not_allowed"
    assert allowed.status == 200


def test_a_revoked_key_from_outside_is_401_revoked_not_403(api: Api, alice: str) -> None:
    key = api.create_key(alice, allowedCidrs=["10.0.0.0/8"])
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"


def test_a_key_management_call_from_outside_is_refused_before_anything_else(
    api: Api, alice: str
) -> None:
    admin = api.create_key(alice, allowedCidrs=["10.0.0.0/8"])

    answer = api.call("POST", KEYS, admin["key"], raw=b"{not json")

    assert (answer.status, answer.code) == (403, "ip_not_allowed")


def test_a_rotated_key_keeps_its_allow_list(api: Api, alice: str) -> None:
    key = api.create_key(alice, allowedCidrs=["10.0.0.0/8"])

    new = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).json

    assert new["allowedCidrs"] == ["10.0.0.0/8"]
    assert api.call("GET", WHOAMI, new["key"]).code == "ip_not_allowed"


def test_the_authorizer_allows_from_inside_and_denies_from_outside(
    api: Api, alice: str, authorize: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    ws = api.workspace(alice)
    inside = api.create_key(
        alice, category="workspace", workspaceId=ws, allowedCidrs=["203.0.113.0/24"]
    )
    outside = api.create_key(
        alice, category="workspace", workspaceId=ws, allowedCidrs=["198.51.100.0/24"]
    )

    allowed = authorize(request_event(MEMORY, bearer(inside["key"]), ws))
    denied = authorize(request_event(MEMORY, bearer(outside["key"]), ws))

    assert effect(allowed)[0] == "Allow"
    assert effect(denied) == ("Deny", {"code": "ip_not_allowed"})


def test_the_authorizer_reads_the_source_from_the_request_context_not_from_headers(
    api: Api, alice: str, authorize: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(
        alice, category="workspace", workspaceId=ws, allowedCidrs=["198.51.100.0/24"]
    )
    event = request_event(MEMORY, bearer(key["key"]), ws)
    event["headers"]["X-Forwarded-For"] = "198.51.100.1"
    assert event["requestContext"]["identity"]["sourceIp"] == FIXTURE_SOURCE

    assert effect(authorize(event)) == ("Deny", {"code": "ip_not_allowed"})


def test_the_authorizer_denies_when_the_event_has_no_source_address(
    api: Api, alice: str, authorize: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws, allowedCidrs=["0.0.0.0/0"])
    event = request_event(MEMORY, bearer(key["key"]), ws)
    del event["requestContext"]["identity"]["sourceIp"]

    assert effect(authorize(event)) == ("Deny", {"code": "ip_not_allowed"})
