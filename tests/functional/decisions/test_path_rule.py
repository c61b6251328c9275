"""The data-plane authorizer decides only on a plain path: a path a backend could normalise
into another area (a dot segment, an encoded slash or backslash, a backslash, an empty
segment) is denied `invalid_path` before any scope is chosen, whatever the credential holds.
API Gateway answers every Deny with 403; the body's `code` says `invalid_path`."""

from __future__ import annotations

import pytest

from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.oauth import delegated

# Each is served, once normalised, outside the `memory` area its first segment names.
ESCAPES = [
    "/v1/memory/../entities/x",
    "/v1/memory%2F..%2Fentities/x",
    "/v1/memory/../workspaces/{ws}/members",
    "/v1/memory/%2e%2e/entities/x",
    "/v1/memory/%2E%2E/entities/x",
    "/v1/memory/.%2e/entities/x",
    "/v1/memory/%252e%252e/entities/x",
    "/v1/memory%2f..%2fentities/x",
    "/v1/memory%252F..%252Fentities/x",
    "/v1/memory%5C..%5Centities/x",
    "/v1/memory%5c..%5centities/x",
    "/v1/memory\\..\\entities/x",
    "/v1/memory/..;/entities/x",
    "/v1/memory/./x",
    "/v1/memory//x",
    "/v1/memory/x/",
    "/mcp/../v1/workspaces/{ws}/members",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_a_memory_only_token_is_denied_invalid_path_on_a_path_that_leaves_its_area(
    api: Api, alice: str, authorize: Invoke, path: str
) -> None:
    ws = api.workspace(alice)
    token = delegated(api, api.create_key(alice)["key"], workspace_id=ws, scope="memory")

    answer = authorize(request_event(path.format(ws=ws), bearer(token), ws))

    assert effect(answer) == "Deny"
    assert answer["context"] == {"code": "invalid_path"}
    assert answer["principalId"] == "anonymous"


@pytest.mark.parametrize("path", ["/v1/memory/items", "/v1/memory/items/file.json", "/v1/memory"])
def test_the_same_token_is_allowed_on_plain_paths_of_its_area(
    api: Api, alice: str, authorize: Invoke, path: str
) -> None:
    ws = api.workspace(alice)
    token = delegated(api, api.create_key(alice)["key"], workspace_id=ws, scope="memory")

    answer = authorize(request_event(path, bearer(token), ws))

    assert effect(answer) == "Allow"


def test_an_invalid_path_is_denied_before_the_credential_is_read(authorize: Invoke) -> None:
    # No credential at all: a plain path would be a 401 (Unauthorized raised).
    answer = authorize(request_event("/v1/memory/../workspaces", None, None))

    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "invalid_path"
