"""What type checkers see of `client.auth`. Checked by mypy --strict, never run.

`warn_unreachable` is on (pyproject.toml). A line ending in `# type: ignore[unreachable]`
is one mypy must find unreachable: were it reachable, the ignore would be unused, and
--strict (`warn_unused_ignores`) reports that as an error. So each function below fails the
lint if the bolt sentinel stops being typed as never returning.
"""

from __future__ import annotations

from typing import Literal, assert_type

from memory_sdk import ApiKey, AuthClient, Backend, MemoryClient, Principal, UnsupportedAuth


async def bolt_whoami_never_returns() -> None:
    client = MemoryClient(backend="bolt")
    assert_type(client, MemoryClient[Literal["bolt"]])
    assert_type(client.auth, UnsupportedAuth)
    await client.auth.whoami()
    print("after whoami")  # type: ignore[unreachable]


async def bolt_key_methods_never_return() -> None:
    async with MemoryClient(backend="bolt", graphdb_password="pw") as client:
        await client.auth.list_api_keys("ws_1", status="active", all_workspaces=False)
        print("after list_api_keys")  # type: ignore[unreachable]


async def bolt_create_never_returns() -> None:
    client = MemoryClient(backend="bolt")
    await client.auth.create_api_key("label", ["memory"], category="workspace")
    print("after create_api_key")  # type: ignore[unreachable]


def bolt_iteration_never_starts() -> None:
    client = MemoryClient(backend="bolt")
    client.auth.iter_api_keys()
    print("after iter_api_keys")  # type: ignore[unreachable]


async def svc_auth_returns() -> None:
    client = MemoryClient(backend="svc", api_key="sv" + "c_typecheckOnly")
    assert_type(client.auth, AuthClient)
    keys = await client.auth.list_api_keys(all_workspaces=True)
    assert_type(keys, list[ApiKey])
    print("reachable")


async def a_backend_from_the_environment_is_not_known_to_be_bolt(backend: Backend) -> None:
    for client in (MemoryClient(), MemoryClient(backend=backend)):
        assert_type(client, MemoryClient[Backend])
        assert_type(client.auth, AuthClient)
        me = await client.auth.whoami()
        assert_type(me, Principal)


def any_client_is_a_memory_client(client: MemoryClient) -> AuthClient:
    """A bare `MemoryClient` annotation takes every client, bolt or svc."""
    return client.auth


def callers() -> None:
    any_client_is_a_memory_client(MemoryClient(backend="bolt"))
    any_client_is_a_memory_client(MemoryClient(backend="svc"))
