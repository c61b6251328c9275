"""`client.auth` against a scripted fake: request shapes, typed results, the bolt sentinel."""

from __future__ import annotations

import inspect

import httpx
import pytest

from memory_sdk import (
    ApiKey,
    AuthClient,
    MemoryClient,
    NotSupportedError,
    Principal,
    TokenPair,
    UnexpectedResponseError,
    UnsupportedAuth,
)
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, WORKSPACE_KEY, FakeService, key_resource, problem

pytestmark = pytest.mark.anyio

ACCESS = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl"
REFRESH = "rt_" + "unitTestRefreshToken000000000000"


def svc_client(
    fake: FakeService, *, workspace_id: str | None = None, access_token: str | None = None
) -> MemoryClient:
    return MemoryClient(
        api_key=ADMIN_KEY,
        endpoint=ENDPOINT,
        workspace_id=workspace_id,
        access_token=access_token,
        svc={"backoff": 0},
        http_transport=fake.transport(),
    )


def tokens(access: str = ACCESS, refresh: str = REFRESH) -> httpx.Response:
    body = {"access_token": access, "token_type": "Bearer", "expires_in": 3600}
    return httpx.Response(200, json={**body, "refresh_token": refresh})


async def test_create_sends_no_category_by_default() -> None:
    fake = FakeService(httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY)))

    async with svc_client(fake) as client:
        created = await client.auth.create_api_key("ci", ["memory"])

    assert fake.requests[0].method == "POST"
    assert fake.requests[0].url.path == "/v1/auth/api-keys"
    assert fake.body(0) == {"label": "ci", "scopes": ["memory"]}
    assert isinstance(created, ApiKey)
    assert created.key is not None and created.key.get_secret_value() == WORKSPACE_KEY


async def test_create_and_rotate_send_a_new_idempotency_key_per_call() -> None:
    fake = FakeService(*(httpx.Response(201, json=key_resource()) for _ in range(4)))

    async with svc_client(fake) as client:
        await client.auth.create_api_key("ci")
        await client.auth.create_api_key("ci")
        await client.auth.rotate_api_key("key_01")
        await client.auth.rotate_api_key("key_01", idempotency_key="my-own-key")

    keys = [request.headers["Idempotency-Key"] for request in fake.requests]
    assert len(set(keys[:3])) == 3
    assert keys[3] == "my-own-key"


async def test_a_create_whose_answer_was_lost_is_retried_and_answers_one_key() -> None:
    fake = FakeService(
        httpx.ReadTimeout("lost after the service created the key"),
        problem(503, "dependency_unavailable"),
        httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY)),
    )

    async with svc_client(fake) as client:
        created = await client.auth.create_api_key("ci")

    assert created.key is not None and created.key.get_secret_value() == WORKSPACE_KEY
    assert len({request.headers["Idempotency-Key"] for request in fake.requests}) == 1
    assert len(fake.requests) == 3


async def test_a_rotation_answered_503_is_retried_with_its_key() -> None:
    fake = FakeService(
        problem(503, "dependency_unavailable"),
        httpx.Response(201, json=key_resource("key_02", plaintext=WORKSPACE_KEY)),
    )

    async with svc_client(fake) as client:
        successor = await client.auth.rotate_api_key("key_01")

    assert successor.id == "key_02"
    assert fake.requests[0].headers["Idempotency-Key"] == fake.requests[1].headers[
        "Idempotency-Key"
    ]


async def test_a_refresh_whose_answer_was_lost_is_retried_with_the_same_token() -> None:
    fake = FakeService(httpx.ReadTimeout("lost"), tokens(refresh="rt_" + "next" + "0" * 39))

    async with svc_client(fake, access_token=ACCESS) as client:
        pair = await client.auth.refresh_access_token(REFRESH)

    assert [fake.body(i)["refresh_token"] for i in range(2)] == [REFRESH, REFRESH]
    assert pair.refresh_token is not None
    assert pair.refresh_token.get_secret_value() == "rt_" + "next" + "0" * 39


async def test_create_with_a_workspace_but_no_category_sends_it_as_the_spec_documents() -> None:
    fake = FakeService(httpx.Response(201, json=key_resource()))

    async with svc_client(fake) as client:
        await client.auth.create_api_key("ci", workspace_id="ws_1")

    assert fake.body(0) == {"label": "ci", "workspaceId": "ws_1"}


async def test_create_a_workspace_key_binds_the_configured_workspace() -> None:
    fake = FakeService(httpx.Response(201, json=key_resource(category="workspace")))

    async with svc_client(fake, workspace_id="ws_conf") as client:
        await client.auth.create_api_key("ci", category="workspace")

    assert fake.body(0) == {"label": "ci", "category": "workspace", "workspaceId": "ws_conf"}


async def test_list_is_filtered_to_the_configured_workspace_by_default() -> None:
    page = httpx.Response(200, json={"keys": [], "nextCursor": None})
    fake = FakeService(page, page, page)

    async with svc_client(fake, workspace_id="ws_conf") as client:
        await client.auth.list_api_keys()
        await client.auth.list_api_keys("ws_other")
        await client.auth.list_api_keys(all_workspaces=True)

    sent = [r.headers.get("X-Workspace-Id") for r in fake.requests]
    assert sent == ["ws_conf", "ws_other", None]


async def test_all_workspaces_lists_every_page_without_a_workspace() -> None:
    fake = FakeService(
        httpx.Response(200, json={"keys": [key_resource("key_2")], "nextCursor": "c1"}),
        httpx.Response(200, json={"keys": [key_resource("key_1")], "nextCursor": None}),
    )

    async with svc_client(fake, workspace_id="ws_conf") as client:
        keys = [key.id async for key in client.auth.iter_api_keys(all_workspaces=True)]

    assert keys == ["key_2", "key_1"]
    assert all("X-Workspace-Id" not in r.headers for r in fake.requests)
    assert fake.requests[1].url.params["cursor"] == "c1"


async def test_a_workspace_and_all_workspaces_together_are_a_usage_error() -> None:
    fake = FakeService()

    async with svc_client(fake) as client:
        with pytest.raises(ValueError, match="all_workspaces"):
            await client.auth.list_api_keys("ws_1", all_workspaces=True)

    assert fake.requests == []


async def test_other_calls_still_send_the_configured_workspace() -> None:
    fake = FakeService(httpx.Response(200, json={"userId": "u", "credential": "api_key"}))

    async with svc_client(fake, workspace_id="ws_conf") as client:
        await client.auth.whoami()

    assert fake.requests[0].headers["X-Workspace-Id"] == "ws_conf"


async def test_list_follows_every_page_and_names_the_workspace() -> None:
    fake = FakeService(
        httpx.Response(200, json={"keys": [key_resource("key_2")], "nextCursor": "c1"}),
        httpx.Response(200, json={"keys": [key_resource("key_1")], "nextCursor": None}),
    )

    async with svc_client(fake) as client:
        keys = await client.auth.list_api_keys("ws_1", status="active")

    assert [k.id for k in keys] == ["key_2", "key_1"]
    assert all(k.key is None for k in keys)
    assert [r.headers["X-Workspace-Id"] for r in fake.requests] == ["ws_1", "ws_1"]
    assert dict(fake.requests[0].url.params) == {"limit": "100", "status": "active"}
    assert dict(fake.requests[1].url.params) == {"limit": "100", "status": "active", "cursor": "c1"}


async def test_list_with_a_query_searches_on_the_service_through_every_page() -> None:
    fake = FakeService(
        httpx.Response(200, json={"keys": [], "nextCursor": "c1"}),
        httpx.Response(200, json={"keys": [key_resource("key_1")], "nextCursor": None}),
    )

    async with svc_client(fake) as client:
        keys = await client.auth.list_api_keys(query="bulk key 01", status="active")

    assert [k.id for k in keys] == ["key_1"]
    assert dict(fake.requests[0].url.params) == {
        "limit": "100",
        "status": "active",
        "q": "bulk key 01",
    }
    assert fake.requests[1].url.params["q"] == "bulk key 01"
    assert fake.requests[1].url.params["cursor"] == "c1"


async def test_an_empty_query_sends_no_search() -> None:
    fake = FakeService(httpx.Response(200, json={"keys": [], "nextCursor": None}))

    async with svc_client(fake) as client:
        await client.auth.list_api_keys(query="")

    assert "q" not in fake.requests[0].url.params


@pytest.mark.parametrize(
    ("method_name", "http_method", "path", "answer"),
    [
        ("get_api_key", "GET", "/v1/auth/api-keys/key_1", httpx.Response(200, json=key_resource())),
        (
            "reveal_api_key",
            "GET",
            "/v1/auth/api-keys/key_1/reveal",
            httpx.Response(200, json=key_resource(plaintext=WORKSPACE_KEY)),
        ),
        (
            "rotate_api_key",
            "POST",
            "/v1/auth/api-keys/key_1/rotate",
            httpx.Response(201, json=key_resource("key_2", plaintext=WORKSPACE_KEY)),
        ),
        ("revoke_api_key", "DELETE", "/v1/auth/api-keys/key_1", httpx.Response(204)),
    ],
)
async def test_key_lifecycle_methods_call_their_endpoint(
    method_name: str, http_method: str, path: str, answer: httpx.Response
) -> None:
    fake = FakeService(answer)

    async with svc_client(fake) as client:
        result = await getattr(client.auth, method_name)("key_1")

    assert (fake.requests[0].method, fake.requests[0].url.path) == (http_method, path)
    assert fake.requests[0].headers["Authorization"] == f"Bearer {ADMIN_KEY}"
    assert result is None if http_method == "DELETE" else isinstance(result, ApiKey)


async def test_a_key_id_cannot_leave_its_path_segment() -> None:
    fake = FakeService(httpx.Response(204))

    async with svc_client(fake) as client:
        await client.auth.revoke_api_key("../../workspaces/ws_1")

    assert fake.requests[0].url.raw_path == b"/v1/auth/api-keys/..%2F..%2Fworkspaces%2Fws_1"


async def test_whoami_returns_the_principal() -> None:
    body = {
        "userId": "usr_1",
        "credential": "api_key",
        "keyId": "key_1",
        "category": "workspace",
        "workspaceId": "ws_1",
        "scopes": ["memory"],
    }
    fake = FakeService(httpx.Response(200, json=body))

    async with svc_client(fake) as client:
        principal = await client.auth.whoami()

    assert principal == Principal(
        user_id="usr_1",
        credential="api_key",
        key_id="key_1",
        category="workspace",
        workspace_id="ws_1",
        scopes=("memory",),
    )


async def test_exchange_signs_the_client_in_with_the_user_token() -> None:
    fake = FakeService(
        tokens(), httpx.Response(200, json={"userId": "u", "credential": "user_token"})
    )

    async with svc_client(fake) as client:
        pair = await client.auth.exchange("id-" + "token")
        await client.auth.whoami()

    assert fake.requests[0].url.path == "/v1/auth/exchange"
    assert fake.body(0) == {"id_token": "id-" + "token"}
    assert "Authorization" not in fake.requests[0].headers
    assert fake.requests[1].headers["Authorization"] == f"Bearer {ACCESS}"
    assert isinstance(pair, TokenPair)
    assert pair.expires_in == 3600
    assert ACCESS not in repr(pair) and REFRESH not in repr(pair)


async def test_refresh_uses_the_held_refresh_token_then_the_new_one() -> None:
    second_refresh = "rt_" + "unitTestSecondRefresh0000000000"
    fake = FakeService(tokens(), tokens("eyJ" + "a.b.c", second_refresh), tokens())

    async with svc_client(fake) as client:
        await client.auth.exchange("id-" + "token")
        await client.auth.refresh_access_token()
        await client.auth.refresh_access_token()

    assert fake.body(1) == {"refresh_token": REFRESH}
    assert fake.body(2) == {"refresh_token": second_refresh}
    assert "Authorization" not in fake.requests[1].headers


async def test_refresh_without_a_refresh_token_is_a_usage_error() -> None:
    async with svc_client(FakeService()) as client:
        with pytest.raises(ValueError, match="exchange"):
            await client.auth.refresh_access_token()


async def test_an_explicit_access_token_is_sent_instead_of_the_key() -> None:
    fake = FakeService(httpx.Response(200, json={"userId": "u", "credential": "user_token"}))

    async with svc_client(fake, access_token=ACCESS) as client:
        await client.auth.whoami()

    assert fake.requests[0].headers["Authorization"] == f"Bearer {ACCESS}"


async def test_a_malformed_answer_is_an_unexpected_response_without_its_body() -> None:
    broken = {"id": "key_1", "key": WORKSPACE_KEY}  # the other fields are missing
    fake = FakeService(httpx.Response(201, json=broken))

    async with svc_client(fake) as client:
        with pytest.raises(UnexpectedResponseError) as raised:
            await client.auth.create_api_key("ci")

    assert WORKSPACE_KEY not in str(raised.value)
    assert raised.value.__context__ is None


async def test_reprs_never_show_a_secret() -> None:
    fake = FakeService(httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY)), tokens())

    async with svc_client(fake, workspace_id="ws_1") as client:
        created = await client.auth.create_api_key("ci")
        pair = await client.auth.exchange("id-" + "token")
        shown = [
            repr(client),
            repr(client.auth),
            repr(created),
            str(created),
            repr(pair),
            created.model_dump_json(),
            pair.model_dump_json(),
            repr(client.settings),
        ]

    for text in shown:
        for secret in (ADMIN_KEY, WORKSPACE_KEY, ACCESS, REFRESH):
            assert secret not in text


# -- the bolt backend --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "use",
    [
        "list_api_keys",
        "reveal_api_key",
        "rotate_api_key",
        "revoke_api_key",
        "create_api_key",
        "exchange",
        "refresh_access_token",
        "whoami",
        "sessions",
        "sign_out_everywhere",
        "anything_else",
    ],
)
def test_auth_on_bolt_raises_not_supported_on_any_use(use: str) -> None:
    client = MemoryClient(backend="bolt")

    with pytest.raises(NotSupportedError) as raised:
        getattr(client.auth, use)

    message = str(raised.value)
    assert "bolt" in message and "GRAPHDB_PASSWORD" in message
    assert "NAM_BACKEND=svc" in message and "MEMORY_API_KEY" in message


def test_auth_on_bolt_says_why_bolt_was_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    defaulted = MemoryClient()
    monkeypatch.setenv("NAM_BACKEND", "bolt")
    forced = MemoryClient(api_key=ADMIN_KEY)

    with pytest.raises(NotSupportedError) as by_default:
        defaulted.auth.whoami  # noqa: B018
    with pytest.raises(NotSupportedError) as by_choice:
        forced.auth.whoami  # noqa: B018

    assert "no MEMORY_API_KEY" in str(by_default.value)
    assert "NAM_BACKEND" in str(by_choice.value)


def test_the_bolt_sentinel_declares_every_method_of_auth_as_never_returning() -> None:
    public = {
        name
        for name, member in inspect.getmembers(AuthClient)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }

    declared = {name for name in vars(UnsupportedAuth) if not name.startswith("_")}

    assert public == declared
    for name in declared:
        member = vars(UnsupportedAuth)[name]
        function = member.fget if isinstance(member, property) else member
        assert function is not None
        assert inspect.signature(function).return_annotation == "NoReturn"


def test_the_bolt_sentinel_is_typed_as_auth_and_safe_to_print() -> None:
    client = MemoryClient(backend="bolt")

    assert isinstance(client.auth, UnsupportedAuth)
    assert isinstance(client.auth, AuthClient)
    assert repr(client.auth) == "UnsupportedAuth(backend='bolt')"


async def test_a_bolt_client_closes_without_a_transport() -> None:
    async with MemoryClient(backend="bolt") as client:
        assert client.backend == "bolt"
