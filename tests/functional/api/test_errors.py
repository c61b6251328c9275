"""Every documented error status (README, "Errors"): problem+json with stable codes."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from chalicelib.errors import PROBLEMS
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"


def assert_problem(answer, status: int, code: str) -> None:
    assert answer.status == status, answer.body
    assert answer.headers["Content-Type"] == "application/problem+json"
    body = answer.json
    assert set(body) == {"type", "title", "status", "detail", "code", "error"}
    assert (body["status"], body["code"], body["error"]) == (status, code, code)
    assert body["type"] == "/docs/errors#" + code
    assert PROBLEMS[code].status == status  # a documented pair, from the one catalogue


# -- 401 ----------------------------------------------------------------------------------------


def test_401_missing_credentials_without_error_attribute(api: Api) -> None:
    answer = api.call("GET", WHOAMI)
    assert_problem(answer, 401, "missing_credentials")
    assert answer.headers["WWW-Authenticate"] == 'Bearer realm="svc"'


@pytest.mark.parametrize(
    "credential",
    [
        "sv" + "c_" + "A" * 50,  # right shape, wrong checksum
        "sv" + "c_short",
        "leg" + "acy_unknownkey",
        "ey" + "JhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
        "not-a-key",
    ],
)
def test_401_invalid_credentials_with_invalid_token_error(api: Api, credential: str) -> None:
    answer = api.call("GET", WHOAMI, credential)
    assert_problem(answer, 401, "invalid_credentials")
    assert answer.headers["WWW-Authenticate"] == 'Bearer realm="svc", error="invalid_token"'


def test_401_invalid_credentials_for_a_well_formed_unknown_key(api: Api) -> None:
    from chalicelib.keys.plaintext import generate_key

    assert_problem(api.call("GET", WHOAMI, generate_key()), 401, "invalid_credentials")


def test_401_for_a_non_bearer_scheme(api: Api) -> None:
    answer = api.call("GET", WHOAMI, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert_problem(answer, 401, "invalid_credentials")


def test_401_expired_user_token(api: Api) -> None:
    from datetime import UTC, datetime, timedelta

    from chalicelib.clock import FrozenClock
    from chalicelib.sessions.access_tokens import TokenSigner

    svc = api.services
    two_hours_ago = FrozenClock(datetime.now(UTC) - timedelta(hours=2))
    signer = TokenSigner(svc.kms, svc.signing_keys, svc.settings.issuer, two_hours_ago)
    expired = signer.mint("usr_alice").token
    assert_problem(api.call("GET", WHOAMI, expired), 401, "expired_credentials")


def test_401_user_token_for_another_issuer(api: Api) -> None:
    from chalicelib.clock import Clock
    from chalicelib.sessions.access_tokens import TokenSigner

    svc = api.services
    foreign = TokenSigner(svc.kms, svc.signing_keys, "https://elsewhere.example", Clock())
    assert_problem(
        api.call("GET", WHOAMI, foreign.mint("usr_alice").token), 401, "invalid_credentials"
    )


def test_401_revoked_credentials(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert_problem(api.call("GET", WHOAMI, key["key"]), 401, "revoked_credentials")


# -- 403 ----------------------------------------------------------------------------------------


def test_403_workspace_key_sends_another_workspace_id(api: Api, alice: str) -> None:
    ws, other = api.workspace(alice), api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    assert_problem(api.call("GET", WHOAMI, key["key"], workspace=other), 403, "workspace_mismatch")


def test_403_owner_not_a_member_of_the_resolved_workspace(api: Api, alice: str, bob: str) -> None:
    ws = api.workspace(bob)
    assert_problem(api.call("GET", KEYS, alice, workspace=ws), 403, "not_a_member")


def test_403_creating_a_workspace_key_for_a_workspace_the_caller_is_not_in(
    api: Api, alice: str, bob: str
) -> None:
    ws = api.workspace(bob)
    answer = api.call(
        "POST", KEYS, alice, body={"label": "x", "category": "workspace", "workspaceId": ws}
    )
    assert_problem(answer, 403, "not_a_member")


def test_403_insufficient_scope_for_scopes_the_creator_lacks(api: Api, alice: str) -> None:
    limited = api.create_key(alice, scopes=["memory", "workspace:admin"])
    answer = api.call("POST", KEYS, limited["key"], body={"label": "x", "scopes": ["skills"]})
    assert_problem(answer, 403, "insufficient_scope")


def test_403_insufficient_scope_for_workspace_key_on_key_management(api: Api, alice: str) -> None:
    key = api.create_key(alice, category="workspace", workspaceId=api.workspace(alice))
    assert_problem(api.call("GET", KEYS, key["key"]), 403, "insufficient_scope")


# -- 404, 409, 410 ------------------------------------------------------------------------------


def test_404_non_owner_calls_reveal(api: Api, alice: str, bob: str) -> None:
    key = api.create_key(alice)
    assert_problem(api.call("GET", f"{KEYS}/{key['id']}/reveal", bob), 404, "not_found")


@pytest.mark.parametrize("key_id", ["key_01ARZ3NDEKTSV4RRFFQ69G5FAV", "nonsense", "KEY%23x"])
def test_404_unknown_key_id(api: Api, alice: str, key_id: str) -> None:
    assert_problem(api.call("GET", f"{KEYS}/{key_id}", alice), 404, "not_found")


def test_409_rotating_a_revoked_key(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert_problem(api.call("POST", f"{KEYS}/{key['id']}/rotate", alice), 409, "key_not_active")


def test_410_reveal_of_a_revoked_key(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)
    assert_problem(api.call("GET", f"{KEYS}/{key['id']}/reveal", alice), 410, "key_revoked")


def test_410_reveal_of_a_key_created_before_encryption_at_rest(api: Api) -> None:
    from tools.import_legacy_keys import LegacyKey, import_keys

    import_keys(api.services, [LegacyKey("usr_dave", "old", sha256="ab" * 32)])
    dave = api.token("usr_dave")
    key_id = api.call("GET", KEYS, dave).json["keys"][0]["id"]
    assert_problem(api.call("GET", f"{KEYS}/{key_id}/reveal", dave), 410, "key_not_revealable")


# -- 400 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["workspaceId", "workspace_id"])
def test_400_admin_key_with_a_workspace_id(api: Api, alice: str, field: str) -> None:
    ws = api.workspace(alice)
    answer = api.call("POST", KEYS, alice, body={"label": "x", field: ws})
    assert_problem(answer, 400, "workspace_id_not_allowed")


def test_400_explicit_admin_category_with_a_workspace_id(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    answer = api.call(
        "POST", KEYS, alice, body={"label": "x", "category": "admin", "workspaceId": ws}
    )
    assert_problem(answer, 400, "workspace_id_not_allowed")


def test_400_workspace_key_without_workspace_id(api: Api, alice: str) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "x", "category": "workspace"})
    assert_problem(answer, 400, "workspace_id_required")


def test_400_both_workspace_spellings_disagree(api: Api, alice: str) -> None:
    answer = api.call(
        "POST",
        KEYS,
        alice,
        body={"label": "x", "category": "workspace", "workspaceId": "ws_a", "workspace_id": "ws_b"},
    )
    assert_problem(answer, 400, "conflicting_workspace_id")


@pytest.mark.parametrize("category", ["root", "", 3, ["admin"]])
def test_400_invalid_category(api: Api, alice: str, category: object) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "x", "category": category})
    assert_problem(answer, 400, "invalid_category")


@pytest.mark.parametrize("category", ["root", 3])
def test_the_category_is_judged_once_after_the_caller_may_create_keys(
    api: Api, alice: str, category: object
) -> None:
    key = api.create_key(alice, category="workspace", workspaceId=api.workspace(alice))
    answer = api.call("POST", KEYS, key["key"], body={"label": "x", "category": category})
    assert_problem(answer, 403, "insufficient_scope")


@pytest.mark.parametrize(
    "scopes",
    [[], ["memory", "root"], "memory", [1], ["workspace:admin"]],
    ids=["empty", "unknown", "not-a-list", "not-strings", "admin-scope-on-workspace-key"],
)
def test_400_invalid_scope(api: Api, alice: str, scopes: object) -> None:
    ws = api.workspace(alice)
    answer = api.call(
        "POST",
        KEYS,
        alice,
        body={"label": "x", "category": "workspace", "workspaceId": ws, "scopes": scopes},
    )
    assert_problem(answer, 400, "invalid_scope")


@pytest.mark.parametrize(
    "label",
    [None, "", "   ", "x" * 101, 7, "tab\there", "bell\x07"],
    ids=["missing", "empty", "blank", "too-long", "number", "tab", "control"],
)
def test_400_invalid_label(api: Api, alice: str, label: object) -> None:
    body = {} if label is None else {"label": label}
    assert_problem(api.call("POST", KEYS, alice, body=body), 400, "invalid_label")


def test_400_unknown_field(api: Api, alice: str) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "x", "owner": "usr_bob"})
    assert_problem(answer, 400, "unknown_field")


@pytest.mark.parametrize("raw", [b"{", b"[]", b'"label"', b"\xff\xfe", b"null"])
def test_400_malformed_json(api: Api, alice: str, raw: bytes) -> None:
    assert_problem(api.call("POST", KEYS, alice, raw=raw), 400, "invalid_json")


@pytest.mark.parametrize("query", ["limit=0", "limit=101", "limit=x", "status=gone", "cursor=zz"])
def test_400_invalid_list_parameters(api: Api, alice: str, query: str) -> None:
    assert_problem(api.call("GET", f"{KEYS}?{query}", alice), 400, "invalid_parameter")


def test_400_unknown_query_parameter(api: Api, alice: str) -> None:
    assert_problem(api.call("GET", f"{KEYS}?owner=usr_bob", alice), 400, "unknown_parameter")


@pytest.mark.parametrize("limit", ["²", "٣", "1" * 5000, "+5", " 5"])
def test_400_not_500_for_a_limit_python_would_parse(api: Api, alice: str, limit: str) -> None:
    answer = api.call("GET", f"{KEYS}?limit={quote(limit)}", alice)
    assert_problem(answer, 400, "invalid_parameter")


def test_400_not_500_for_a_cursor_of_deeply_nested_json(api: Api, alice: str) -> None:
    cursor = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode().rstrip("=")
    answer = api.call("GET", f"{KEYS}?cursor={cursor}", alice)
    assert_problem(answer, 400, "invalid_parameter")


def test_400_not_500_for_deeply_nested_json(api: Api, alice: str) -> None:
    raw = b"[" * 5000 + b"]" * 5000
    assert_problem(api.call("POST", KEYS, alice, raw=raw), 400, "invalid_json")


def test_400_not_503_for_a_label_with_a_lone_surrogate(api: Api, alice: str) -> None:
    answer = api.call("POST", KEYS, alice, raw=b'{"label": "a\\ud800"}')
    assert_problem(answer, 400, "invalid_label")


# -- 413, 405, 415 ------------------------------------------------------------------------------


def test_413_body_over_16_kib(api: Api, alice: str) -> None:
    raw = json.dumps({"label": "x" * (16 * 1024)}).encode()
    assert_problem(api.call("POST", KEYS, alice, raw=raw), 413, "payload_too_large")


def test_a_body_of_exactly_16_kib_is_read(api: Api, alice: str) -> None:
    compact = json.dumps({"label": "x"}).encode()
    raw = compact[:-1] + b" " * (16 * 1024 - len(compact)) + b"}"
    assert len(raw) == 16 * 1024
    assert api.call("POST", KEYS, alice, raw=raw).status == 201


def test_405_wrong_method_is_a_problem_with_allow(api: Api, alice: str) -> None:
    answer = api.call("PATCH", WHOAMI, alice)
    assert_problem(answer, 405, "method_not_allowed")
    assert answer.headers["Allow"] == "GET, OPTIONS"  # OPTIONS: the CORS preflight


def test_415_wrong_content_type_is_a_problem(api: Api, alice: str) -> None:
    answer = api.call(
        "POST",
        KEYS,
        alice,
        raw=b"label=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_problem(answer, 415, "unsupported_media_type")


def test_no_error_body_ever_contains_the_credential_sent(api: Api) -> None:
    from chalicelib.keys.plaintext import generate_key

    sent = generate_key()
    answer = api.call("GET", WHOAMI, sent)
    assert sent.encode() not in answer.body


# -- where `type` points ------------------------------------------------------------------------


def test_behind_api_gateway_a_problem_type_names_the_path_of_the_stage(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # API Gateway serves the API under its stage (/v1api/...) and names it in the request
    # context; the local server (and the test client) name none and serve at the root.
    from chalice.local import LambdaEventConverter

    convert = LambdaEventConverter.create_lambda_event

    def through_the_gateway(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        event = convert(self, *args, **kwargs)
        event["requestContext"]["stage"] = "v1api"
        return event

    monkeypatch.setattr(LambdaEventConverter, "create_lambda_event", through_the_gateway)

    body = api.call("GET", WHOAMI).json

    assert body["type"] == "/v1api/docs/errors#missing_credentials"
