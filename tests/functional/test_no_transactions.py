"""The stores without transactions, on a store that refuses them (as a DynamoDB table with
multi-Region strong consistency does): each change's commit point is one conditional write,
what follows it is completed by a retry or by the sweep, and maximum counts are counters.

The functional tier's moto refuses TransactWriteItems and TransactGetItems
(tests/functional/conftest.py); every test here and in the tier runs against that store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from copy import replace
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from chalicelib import errors, items, table
from chalicelib.access.principal import Principal
from chalicelib.access.scopes import ALL_SCOPES
from chalicelib.api.keys import problem
from chalicelib.clock import FrozenClock
from chalicelib.keys.expiry import ExpirySweep
from chalicelib.keys.refusals import KeyRefused
from chalicelib.keys.service import NewKey
from chalicelib.runtime import Services
from tests.functional.conftest import WRITE_CONFLICTS, Api

KEYS = "/v1/auth/api-keys"
ALICE = Principal("usr_alice", "user_token", frozenset(ALL_SCOPES))


def limited(services: Services, **limits: int) -> None:
    vars(services)["settings"] = replace(services.settings, **limits)
    for built in ("key_service", "workspace_service"):
        vars(services).pop(built, None)


def sweep(services: Services, delete_expired: bool = False) -> Any:
    return ExpirySweep(
        services.key_store, services.event_log, services.clock, services.dynamodb,
        services.settings.table_name, delete_expired=delete_expired,
    ).run()


def events_of(api: Api, token: str, type: str) -> list[dict[str, Any]]:
    answer = api.call("GET", f"/v1/auth/events?type={type}", token)
    assert answer.status == 200
    found: list[dict[str, Any]] = answer.json["events"]
    return found


def credential_of(services: Services, plaintext: str) -> Any:
    from chalicelib.hashing import hash_secret

    return services.key_store.find_by_hash(hash_secret(plaintext))


# -- the store refuses transactions ----------------------------------------------------


def test_the_store_refuses_transact_write_items_with_a_validation_exception(
    services: Services,
) -> None:
    put = {"Put": {"TableName": services.settings.table_name,
                   "Item": {"pk": {"S": "X"}, "sk": {"S": "Y"}}}}
    with pytest.raises(ClientError) as refused:
        services.dynamodb.transact_write_items(TransactItems=[put])
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert services.dynamodb.get_item(
        TableName=services.settings.table_name, Key=table.key("X", "Y")
    ).get("Item") is None


def test_the_store_refuses_transact_get_items_with_a_validation_exception(
    services: Services,
) -> None:
    get = {"Get": {"TableName": services.settings.table_name, "Key": table.key("X", "Y")}}
    with pytest.raises(ClientError) as refused:
        services.dynamodb.transact_get_items(TransactItems=[get])
    assert refused.value.response["Error"]["Code"] == "ValidationException"


# -- rotations: exactly one wins -------------------------------------------------------


def test_two_rotations_of_one_key_read_before_either_wrote_one_wins_the_other_is_409(
    api: Api, alice: str, services: Services
) -> None:
    created = api.create_key(alice)
    read_by_both = credential_of(services, created["key"])

    first = services.key_service.rotate(ALICE, read_by_both, timedelta(0))
    with pytest.raises(KeyRefused) as second:
        services.key_service.rotate(ALICE, read_by_both, timedelta(0))

    answered = problem(second.value.refusal)
    assert answered.status == 409 and answered.code == "key_not_active"
    assert api.call("GET", "/v1/auth/whoami", first.plaintext).status == 200
    assert api.call("GET", "/v1/auth/whoami", created["key"]).status == 401
    assert len(events_of(api, alice, "key.rotated")) == 1


def test_a_revocation_after_a_rotation_read_the_key_active_wins_and_the_rotation_is_409(
    api: Api, alice: str, services: Services
) -> None:
    created = api.create_key(alice)
    read_by_the_rotation = credential_of(services, created["key"])

    assert api.call("DELETE", f"{KEYS}/{created['id']}", alice).status == 204
    with pytest.raises(KeyRefused) as rotation:
        services.key_service.rotate(ALICE, read_by_the_rotation, timedelta(hours=1))

    assert problem(rotation.value.refusal).code == "key_not_active"
    assert api.call("GET", "/v1/auth/whoami", created["key"]).status == 401
    assert [k["id"] for k in api.call("GET", KEYS, alice).json["keys"]] == [created["id"]]


def test_a_revocation_after_a_rotation_read_the_key_revokes_the_key_in_its_grace(
    api: Api, alice: str, services: Services
) -> None:
    created = api.create_key(alice)
    read_by_the_revocation = credential_of(services, created["key"])
    successor = services.key_service.rotate(ALICE, read_by_the_revocation, timedelta(hours=1))

    services.key_service.revoke(ALICE, read_by_the_revocation)

    assert api.call("GET", "/v1/auth/whoami", created["key"]).status == 401
    assert api.call("GET", "/v1/auth/whoami", successor.plaintext).status == 200


# -- limits: a counter, exact under concurrency -----------------------------------------


def all_at_once(creations: list[Callable[[], object]]) -> list[object]:
    """Runs the creations in threads that all start together: each result or exception."""
    start = threading.Barrier(len(creations))
    results: list[object] = [None] * len(creations)

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = creations[index]()
        except errors.ServiceError as refused:
            results[index] = refused
        except KeyRefused as refused:  # as the routes answer it
            results[index] = problem(refused.refusal)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(creations))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_n_plus_one_concurrent_key_creations_at_n_minus_one_keys_exactly_one_is_201(
    api: Api, alice: str, services: Services, one_request_at_a_time: None
) -> None:
    n = 5
    limited(services, key_limit=n)
    for _ in range(n - 1):
        api.create_key(alice)
    service = services.key_service

    results = all_at_once([lambda: service.create(ALICE, NewKey("k")) for _ in range(n + 1)])

    refused = [r for r in results if isinstance(r, errors.ServiceError)]
    assert len(results) - len(refused) == 1
    assert {r.code for r in refused} == {"limit_reached"}
    assert len(api.call("GET", KEYS, alice).json["keys"]) == n


def test_n_plus_one_concurrent_workspace_creations_at_n_minus_one_exactly_one_is_201(
    api: Api, alice: str, services: Services, one_request_at_a_time: None
) -> None:
    n = 4
    limited(services, workspace_limit=n)
    for _ in range(n - 1):
        api.workspace(alice)
    service = services.workspace_service

    results = all_at_once([lambda: service.create(ALICE, "W") for _ in range(n + 1)])

    refused = [r for r in results if isinstance(r, errors.ServiceError)]
    assert len(results) - len(refused) == 1
    assert {r.code for r in refused} == {"limit_reached"}
    owned = [w for w in api.call("GET", "/v1/workspaces", alice).json["workspaces"]]
    assert len(owned) == n


def test_the_key_limit_counts_each_key_once_not_a_read_of_every_key_per_creation(
    api: Api, alice: str, services: Services
) -> None:
    queries: list[str] = []
    services.dynamodb.meta.events.register(
        "before-call.dynamodb.Query", lambda **kw: queries.append("Query")
    )
    for _ in range(3):
        api.create_key(alice)

    assert len(queries) <= 1  # the owner's keys are counted once, when its counter is made


# -- a crash between the commit point and what follows it -------------------------------


@pytest.fixture
def crash_after_the_commit_point(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """From now on, every write after a commit point fails (the container dies there);
    returns the function that ends the crash."""
    return lambda: crashing(monkeypatch)


def crashing(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    commit = table.commit

    def commit_point_only(client: Any, point: dict[str, Any], after: Any = ()) -> None:
        pending = [m for m in after if isinstance(m, table.Pending)]
        ((kind, request),) = point.items()
        if pending and kind != "Delete":
            table.write(client, table._with_outbox(kind, request, pending))
        else:
            table.write(client, point)
        raise errors.DependencyUnavailable("DynamoDB")

    targets = [
        "chalicelib.keys.store.commit",
        "chalicelib.workspaces.store.commit",
        "chalicelib.sessions.refresh.commit",
        "chalicelib.webhooks.store.commit",
        "chalicelib.service_clients.store.commit",
    ]
    for target in targets:
        monkeypatch.setattr(target, commit_point_only)

    def recover() -> None:
        for target in targets:
            monkeypatch.setattr(target, commit)

    return recover


def test_a_crash_after_a_key_creations_commit_point_the_key_works_and_the_sweep_lists_it_once(
    api: Api, alice: str, services: Services, clock: FrozenClock,
    crash_after_the_commit_point: Callable[[], None],
) -> None:
    plaintexts: list[str] = []
    issue = services.key_service._issue

    def remember(*args: Any) -> Any:
        issued = issue(*args)
        plaintexts.append(issued[1])
        return issued

    services.key_service._issue = remember  # type: ignore[method-assign]
    recover = crash_after_the_commit_point()
    answer = api.call("POST", KEYS, alice, body={"label": "crashed"})
    recover()

    assert answer.status == 503 and answer.headers["Retry-After"] == "1"
    assert api.call("GET", "/v1/auth/whoami", plaintexts[0]).status == 200  # committed
    assert api.call("GET", KEYS, alice).json["keys"] == []  # the owner item lags
    assert events_of(api, alice, "key.created") == []

    clock.advance(minutes=6)
    delivered = sweep(services).outbox_delivered
    clock.advance(hours=1)
    again = sweep(services).outbox_delivered

    assert delivered == 2 and again == 0  # the owner item and the event, once
    assert [k["label"] for k in api.call("GET", KEYS, alice).json["keys"]] == ["crashed"]
    assert len(events_of(api, alice, "key.created")) == 1


def test_a_crash_after_a_rotations_commit_point_the_successor_is_401_until_the_sweep(
    api: Api, alice: str, services: Services, clock: FrozenClock,
    crash_after_the_commit_point: Callable[[], None],
) -> None:
    created = api.create_key(alice)
    plaintexts: list[str] = []
    issue = services.key_service._issue

    def remember(*args: Any) -> Any:
        issued = issue(*args)
        plaintexts.append(issued[1])
        return issued

    services.key_service._issue = remember  # type: ignore[method-assign]
    recover = crash_after_the_commit_point()
    answer = api.call("POST", f"{KEYS}/{created['id']}/rotate", alice)
    recover()

    assert answer.status == 503
    assert api.call("GET", "/v1/auth/whoami", created["key"]).status == 401  # claimed
    assert api.call("GET", "/v1/auth/whoami", plaintexts[0]).code == "invalid_credentials"

    clock.advance(minutes=6)
    sweep(services)
    sweep(services)

    assert api.call("GET", "/v1/auth/whoami", plaintexts[0]).status == 200
    assert len(events_of(api, alice, "key.rotated")) == 1


def test_a_retry_with_the_idempotency_key_after_a_crash_is_503_then_the_same_key(
    api: Api, alice: str, services: Services, clock: FrozenClock,
    crash_after_the_commit_point: Callable[[], None],
) -> None:
    headers = {"Idempotency-Key": "crash-1"}
    recover = crash_after_the_commit_point()
    crashed = api.call("POST", KEYS, alice, body={"label": "once"}, headers=headers)
    recover()
    early = api.call("POST", KEYS, alice, body={"label": "once"}, headers=headers)
    clock.advance(minutes=6)
    sweep(services)
    replayed = api.call("POST", KEYS, alice, body={"label": "once"}, headers=headers)

    assert crashed.status == 503 and early.status == 503
    assert replayed.status == 201 and replayed.headers.get("Idempotent-Replayed") == "true"
    assert [k["id"] for k in api.call("GET", KEYS, alice).json["keys"]] == [replayed.json["id"]]


def test_a_crash_after_a_member_removal_delivers_its_event_once_by_the_sweep(
    api: Api, alice: str, bob: str, services: Services, clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = api.workspace(alice)
    api.add_member(alice, ws, "usr_bob")
    deliver = table._deliver
    monkeypatch.setattr(table, "_deliver", _raise)
    answer = api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_bob", alice)
    monkeypatch.setattr(table, "_deliver", deliver)

    assert answer.status == 503
    assert api.call("GET", "/v1/auth/whoami", api.token("usr_bob"),
                    headers={"X-Workspace-Id": ws}).status == 403
    assert events_of(api, alice, "member.removed") == []
    clock.advance(minutes=6)
    sweep(services)
    sweep(services)
    assert len(events_of(api, alice, "member.removed")) == 1


def test_a_crash_after_a_sign_outs_commit_point_ends_the_sign_in_and_the_sweep_records_it(
    api: Api, services: Services, clock: FrozenClock,
    crash_after_the_commit_point: Callable[[], None],
) -> None:
    from tests.functional.oauth import exchange, refresh, trust
    from tests.oidc_issuer import FakeIssuer

    issuer = FakeIssuer()
    trust(services, issuer)
    signed_in = exchange(api, issuer.id_token("carol")).json
    recover = crash_after_the_commit_point()
    answer = api.call("POST", "/v1/auth/revoke", body={"token": signed_in["refresh_token"]})
    recover()

    assert answer.status == 503
    assert refresh(api, signed_in["refresh_token"]).status == 400  # ended: the commit point
    assert api.call("GET", "/v1/auth/whoami", signed_in["access_token"]).status == 401
    owner = api.token(user_of(signed_in["access_token"]))
    before = events_of(api, owner, "session.revoked")
    clock.advance(minutes=6)
    sweep(services)
    sweep(services)

    assert before == []
    assert [e["data"]["reason"] for e in events_of(api, owner, "session.revoked")] == [
        "sign_out"
    ]


def user_of(access_token: str) -> str:
    """The user an access token names (its claims read, not verified: the test minted it)."""
    import jwt

    return str(jwt.decode(access_token, options={"verify_signature": False})["sub"])


def _raise(*args: Any, **kwargs: Any) -> None:
    raise errors.DependencyUnavailable("DynamoDB")


# -- replicated write conflicts: retried once, then 503 ------------------------------------


@pytest.fixture
def conflicts() -> Iterator[Any]:
    yield WRITE_CONFLICTS
    WRITE_CONFLICTS.share = 0


def test_a_conditional_write_meeting_one_replicated_write_conflict_is_retried_and_201(
    api: Api, alice: str, conflicts: Any
) -> None:
    conflicts.share = 0.5  # every other conditional write conflicts once
    created = api.call("POST", KEYS, alice, body={"label": "retried"})
    conflicts.share = 0

    assert created.status == 201
    assert api.call("GET", "/v1/auth/whoami", created.json["key"]).status == 200


def test_every_conditional_write_conflicting_is_503_with_retry_after_and_nothing_written(
    api: Api, alice: str, conflicts: Any
) -> None:
    conflicts.share = 1
    refused = api.call("POST", KEYS, alice, body={"label": "never"})
    conflicts.share = 0

    assert refused.status == 503 and refused.code == "dependency_unavailable"
    assert refused.headers["Retry-After"] == "1"
    assert api.call("GET", KEYS, alice).json["keys"] == []
    assert events_of(api, alice, "key.created") == []


# -- no TTL under MRSC: the sweep deletes what is past its ttl --------------------------


@pytest.fixture
def global_stage() -> Iterator[None]:
    table.expire_by_sweep(True)
    try:
        yield
    finally:
        table.expire_by_sweep(False)


def test_the_global_stages_sweep_deletes_items_past_their_ttl_from_the_sparse_index(
    api: Api, alice: str, services: Services, clock: FrozenClock, global_stage: None
) -> None:
    created = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{created['id']}", alice)  # retained, then gone (ttl)
    credential = items.credential(credential_of(services, created["key"]).key_hash)

    clock.advance(days=400)
    deleted = sweep(services, delete_expired=True).expired_items_deleted
    left = services.dynamodb.get_item(TableName=services.settings.table_name, Key=credential)

    assert deleted >= 3  # the key's two items and its events at least
    assert "Item" not in left
    assert api.call("GET", f"{KEYS}/{created['id']}", alice).status == 404


def test_a_single_region_stages_sweep_deletes_nothing_dynamodb_ttl_does(
    api: Api, alice: str, services: Services, clock: FrozenClock
) -> None:
    created = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{created['id']}", alice)

    clock.advance(days=400)

    assert sweep(services).expired_items_deleted == 0


def test_the_global_stages_authorizer_puts_its_usage_items_and_quota_events_in_the_index(
    api: Api, alice: str, services: Services, clock: FrozenClock, global_stage: None
) -> None:
    from chalice.test import Client

    from app import app
    from chalicelib import runtime
    from tests.fixtures.events import bearer, request_event
    from tests.functional.conftest import another_container

    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws, requestsPerDay=1)
    event = request_event("/v1/memory/items", bearer(key["key"]), ws)
    own = another_container(services)
    with Client(app) as client:
        runtime.use(own)
        try:
            effects = [
                client.lambda_.invoke("authorizer", event).payload["policyDocument"]
                ["Statement"][0]["Effect"]
                for _ in range(2)
            ]
        finally:
            runtime.use(services)
    # Read by the test itself (a raw Query: not an operation of the deployed code).
    indexed = [
        found
        for shard in table.SHARDS
        for found in services.dynamodb.query(
            TableName=services.settings.table_name, IndexName=table.EXPIRY_INDEX,
            KeyConditionExpression="ttlShard = :s",
            ExpressionAttributeValues={":s": {"S": shard}},
        )["Items"]
    ]
    sort_keys = [values["sk"]["S"] for values in indexed]

    assert effects == ["Allow", "Deny"]
    assert any(sk.startswith(items.HOUR_PREFIX) for sk in sort_keys)  # the usage item
    quota = events_of(api, alice, "key.quota_exceeded")
    assert len(quota) == 1
    assert f"{items.EVENT_PREFIX}{quota[0]['id']}" in sort_keys


# -- the webhooks' and service clients' events: members of their change's commit ----------


def test_a_crash_after_a_webhook_creations_commit_point_the_sweep_delivers_its_event_once(
    api: Api, alice: str, services: Services, clock: FrozenClock,
    crash_after_the_commit_point: Callable[[], None],
) -> None:
    from tests.functional.webhooks.conftest import URL

    ws = api.workspace(alice)
    recover = crash_after_the_commit_point()
    answer = api.call(
        "POST", f"/v1/workspaces/{ws}/webhooks", alice, body={"url": URL, "events": ["*"]}
    )
    recover()

    assert answer.status == 503
    (made,) = api.call("GET", f"/v1/workspaces/{ws}/webhooks", alice).json["webhooks"]
    assert events_of(api, alice, "webhook.created") == []  # not stored: the crash
    clock.advance(minutes=6)
    delivered = sweep(services).outbox_delivered
    clock.advance(hours=1)
    again = sweep(services).outbox_delivered

    assert delivered == 1 and again == 0
    (event,) = events_of(api, alice, "webhook.created")
    assert event["data"]["webhookId"] == made["id"]


def test_a_crash_after_a_service_client_deletions_commit_point_the_sweep_delivers_its_event_once(
    api: Api, alice: str, services: Services, clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.functional.service_clients.conftest import Machine, create_client

    ws = api.workspace(alice)
    created = create_client(api, alice, ws, Machine())
    assert created.status == 201, created.body
    client_id = created.json["clientId"]
    deliver = table._deliver
    monkeypatch.setattr(table, "_deliver", _raise)
    answer = api.call("DELETE", f"/v1/workspaces/{ws}/service-clients/{client_id}", alice)
    monkeypatch.setattr(table, "_deliver", deliver)

    assert answer.status == 503
    gone = api.call("GET", f"/v1/workspaces/{ws}/service-clients/{client_id}", alice)
    assert gone.status == 404  # deleted: the commit point
    assert events_of(api, alice, "service_client.deleted") == []
    clock.advance(minutes=6)
    delivered = sweep(services).outbox_delivered
    clock.advance(hours=1)
    again = sweep(services).outbox_delivered

    assert delivered == 1 and again == 0
    (event,) = events_of(api, alice, "service_client.deleted")
    assert event["data"]["clientId"] == client_id


def test_two_first_keys_of_a_new_owner_made_at_once_are_both_made_within_the_limit(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race: this creation's first count fails (no counter yet), and before it reads the
    # counter a concurrent creation makes it; the counter then exists with room left, which
    # is not "at the limit".
    read = table.get_consistent
    raced: list[str] = []
    started: list[bool] = []

    def a_concurrent_first_key_in_between(client: Any, name: str, item_key: Any) -> Any:
        if item_key == items.user_counts("usr_alice") and not started:
            started.append(True)
            raced.append(api.create_key(alice)["id"])
        return read(client, name, item_key)

    monkeypatch.setattr(table, "get_consistent", a_concurrent_first_key_in_between)

    made = api.call("POST", "/v1/auth/api-keys", alice, body={"label": "second"})

    assert len(raced) == 1
    assert made.status == 201, made.body
    assert len(api.call("GET", "/v1/auth/api-keys", alice).json["keys"]) == 2
