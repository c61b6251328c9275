"""The authorizer's event parsing and answers, with a stand-in resolver (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.access.principal import Origin, Principal, Refusal
from chalicelib.access.scopes import ALL_SCOPES, DATA_PLANE_SCOPES
from chalicelib.decisions.authorizer import Unauthorized, authorize, identity, required_scope
from chalicelib.decisions.resolution import (
    INVALID,
    IP_NOT_ALLOWED,
    MISMATCH,
    MISSING,
    NOT_A_MEMBER,
    REVOKED,
)
from chalicelib.errors import DependencyUnavailable
from tests.fixtures.events import HEADERS_ONLY, bearer, request_event

CREDENTIAL = "sv" + "c_placeholder"  # never resolved: the stand-in resolver only records it

WORKSPACE_KEY = Principal(
    user_id="usr_alice",
    credential="api_key",
    scopes=frozenset(DATA_PLANE_SCOPES),
    workspace_id="ws_team",
    key_id="key_01",
    category="workspace",
)
USER_TOKEN = Principal(user_id="usr_alice", credential="user_token", scopes=frozenset(ALL_SCOPES))


class StandIn:
    def __init__(self, answer: Principal | Refusal | Exception):
        self.answer = answer
        self.calls: list[tuple[str | None, str | None]] = []
        self.resources: list[object] = []
        self.origins: list[Origin | None] = []

    def resolve(
        self,
        authorization: str | None,
        workspace_id: str | None,
        resource: object = None,
        origin: Origin | None = None,
        dpop: object = None,
    ) -> Principal | Refusal:
        self.calls.append((authorization, workspace_id))
        self.resources.append(resource)
        self.origins.append(origin)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("path", "scope"),
    [
        ("/v1/memory", "memory"),
        ("/v1/memory/items/42", "memory"),
        ("/v1/entities", "entities"),
        ("/v1/reasoning/runs", "reasoning"),
        ("/v1/ontology/classes", "ontology"),
        ("/v1/skills/", "skills"),
        ("/v1/workspaces", "workspace:admin"),
        ("/v1/workspaces/ws_1/members", "workspace:admin"),
        ("/v1/auth/api-keys", None),
        ("/v1/auth/whoami", None),
        ("/v1/", None),
        ("/v1", None),
        ("/v1//memory", None),
        ("/v2/memory", None),
        ("/memory", None),
        ("/v1/Memory", None),
        ("/v1/memory-export", None),
        ("/v1/workspace:admin", None),
        ("", None),
        (None, None),
    ],
)
def test_first_segment_after_v1_names_the_scope(path: str | None, scope: str | None) -> None:
    assert required_scope(path) == scope


@pytest.mark.parametrize(
    ("authorization_header", "workspace_header"),
    [
        ("Authorization", "X-Workspace-Id"),
        ("authorization", "x-workspace-id"),
        ("AUTHORIZATION", "X-WORKSPACE-ID"),
    ],
)
def test_header_names_match_without_regard_to_case(
    authorization_header: str, workspace_header: str
) -> None:
    event = request_event(
        authorization=bearer(CREDENTIAL),
        workspace="ws_team",
        authorization_header=authorization_header,
        workspace_header=workspace_header,
    )
    assert identity(event) == (bearer(CREDENTIAL), "ws_team")


def test_headers_without_multi_value_headers_are_read() -> None:
    event = request_event(
        "/v1/entities",
        bearer(CREDENTIAL),
        "ws_team",
        fixture=HEADERS_ONLY,
        authorization_header="authorization",
        workspace_header="x-workspace-id",
    )
    assert "multiValueHeaders" not in event
    assert identity(event) == (bearer(CREDENTIAL), "ws_team")


def test_absent_headers_are_none() -> None:
    event = request_event()
    event["headers"] = None
    event["multiValueHeaders"] = None
    assert identity(event) == (None, None)


@pytest.mark.parametrize("header", ["Authorization", "X-Workspace-Id"])
def test_identity_header_sent_twice_is_unauthorized(header: str) -> None:
    event = request_event(authorization=bearer(CREDENTIAL), workspace="ws_team")
    event["multiValueHeaders"][header] = [event["headers"][header], "ws_other"]
    with pytest.raises(Unauthorized):
        identity(event)


def test_identity_header_in_two_spellings_is_unauthorized() -> None:
    event = request_event(authorization=bearer(CREDENTIAL), workspace="ws_team")
    event["multiValueHeaders"]["x-workspace-id"] = ["ws_other"]
    with pytest.raises(Unauthorized):
        identity(event)


def test_allow_is_for_the_method_arn_with_the_principal_as_strings() -> None:
    event = request_event(authorization=bearer(CREDENTIAL), workspace="ws_team")
    resolver = StandIn(WORKSPACE_KEY)
    answer = authorize(event, resolver)
    assert resolver.calls == [(bearer(CREDENTIAL), "ws_team")]
    assert answer["principalId"] == "usr_alice"
    assert answer["policyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [
            {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": event["methodArn"]}
        ],
    }
    assert answer["context"] == {
        "userId": "usr_alice",
        "credential": "api_key",
        "keyId": "key_01",
        "category": "workspace",
        "workspaceId": "ws_team",
        "scopes": "memory entities reasoning ontology skills",
        "clientId": "",
    }


def test_user_token_context_has_empty_strings_where_the_principal_has_none() -> None:
    event = request_event("/v1/workspaces", authorization=bearer("e" + "yJ.placeholder.jwt"))
    answer = authorize(event, StandIn(USER_TOKEN))
    context = answer["context"]
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert context["keyId"] == context["category"] == context["workspaceId"] == ""
    assert context["scopes"].split(" ") == list(ALL_SCOPES)
    assert all(isinstance(value, str) for value in context.values())


def test_unknown_segment_is_denied_without_resolving() -> None:
    event = request_event("/v1/auth/api-keys", authorization=bearer(CREDENTIAL))
    resolver = StandIn(WORKSPACE_KEY)
    answer = authorize(event, resolver)
    assert resolver.calls == []
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    assert answer["policyDocument"]["Statement"][0]["Resource"] == event["methodArn"]
    assert answer["context"] == {"code": "insufficient_scope"}


@pytest.mark.parametrize("refusal", [MISSING, INVALID, REVOKED], ids=lambda r: r.code)
def test_401_refusal_fails_with_the_exact_message_api_gateway_answers_401_to(
    refusal: Refusal,
) -> None:
    event = request_event(authorization=bearer(CREDENTIAL))
    with pytest.raises(Exception, match=r"\AUnauthorized\Z"):
        authorize(event, StandIn(refusal))


@pytest.mark.parametrize(
    "refusal", [MISMATCH, NOT_A_MEMBER, IP_NOT_ALLOWED], ids=lambda r: r.code
)
def test_403_refusal_is_a_deny_with_its_code(refusal: Refusal) -> None:
    event = request_event(authorization=bearer(CREDENTIAL), workspace="ws_other")
    answer = authorize(event, StandIn(refusal))
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    assert answer["context"] == {"code": refusal.code}


def test_the_source_address_and_user_agent_come_from_the_request_context() -> None:
    event = request_event(authorization=bearer(CREDENTIAL))
    event["headers"]["X-Forwarded-For"] = "198.51.100.1"  # written by the caller: not trusted
    event["requestContext"]["identity"]["sourceIp"] = "203.0.113.77"
    resolver = StandIn(WORKSPACE_KEY)

    authorize(event, resolver)

    assert resolver.origins == [Origin("203.0.113.77", "memory-sdk-python/1.0")]


def test_an_event_without_a_source_address_resolves_with_none_and_the_agents_header() -> None:
    event = request_event(authorization=bearer(CREDENTIAL))
    del event["requestContext"]["identity"]
    resolver = StandIn(WORKSPACE_KEY)

    authorize(event, resolver)

    assert resolver.origins == [Origin(None, "memory-sdk-python/1.0")]


def test_missing_scope_is_denied() -> None:
    event = request_event("/v1/workspaces", authorization=bearer(CREDENTIAL))
    answer = authorize(event, StandIn(WORKSPACE_KEY))
    assert answer["policyDocument"]["Statement"][0]["Effect"] == "Deny"
    assert answer["context"] == {"code": "insufficient_scope"}


@pytest.mark.parametrize("segment", DATA_PLANE_SCOPES)
def test_data_plane_call_without_a_workspace_is_denied(segment: str) -> None:
    event = request_event(f"/v1/{segment}", authorization=bearer("e" + "yJ.placeholder.jwt"))
    answer = authorize(event, StandIn(USER_TOKEN))
    assert answer["context"] == {"code": "workspace_required"}


def test_dependency_failure_propagates_as_it_is_never_as_unauthorized() -> None:
    event = request_event(authorization=bearer(CREDENTIAL), workspace="ws_team")
    failure = DependencyUnavailable("DynamoDB")
    with pytest.raises(DependencyUnavailable) as raised:
        authorize(event, StandIn(failure))
    assert raised.value is failure  # not wrapped: API Gateway answers 500, not 401


def test_event_without_method_arn_is_an_error_not_an_answer() -> None:
    event: dict[str, Any] = request_event(authorization=bearer(CREDENTIAL))
    del event["methodArn"]
    with pytest.raises(KeyError):
        authorize(event, StandIn(WORKSPACE_KEY))

