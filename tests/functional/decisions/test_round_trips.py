"""One store round trip per decision for the keys minted today, and what every other
credential costs; and the rules that keep a round trip saved from ever being a rule skipped.

Round trips are counted with botocore's `before-send` event (each HTTP request DynamoDB would
receive, retries included), never timed. A located key (it names its owner, and its workspace
when bound) is read with the membership its decision needs in one `BatchGetItem`; a key minted
before (plain) or a legacy key takes the key read, then the membership read; a user token
(its signature checked locally) its sign-in with the membership, in one `BatchGetItem` (its
sign-in alone, one GetItem, when no workspace is named).
"""

from __future__ import annotations

from collections.abc import Callable
from copy import replace
from dataclasses import dataclass
from typing import Any

import pytest

from chalicelib.decisions.authorizer import Unauthorized
from chalicelib.errors import DependencyUnavailable
from chalicelib.hashing import hash_secret
from chalicelib.keys.plaintext import CHECKSUM_LENGTH, checksum, generate_key, parse_key
from chalicelib.runtime import Services
from tests.fixtures.earlier_keys import mint_plain_key
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.failures import broken, throttled
from tests.functional.oauth import delegated
from tools.import_legacy_keys import LegacyKey, import_keys

MEMORY = "/v1/memory/items"
WORKSPACES = "/v1/workspaces"  # needs workspace:admin and no workspace
WHOAMI = "/v1/auth/whoami"
LEGACY = "leg" + "acy_" + "Rt7oldKey2024"


@pytest.fixture
def sent(services: Services) -> list[str]:
    """The DynamoDB operations sent from now on, one entry per HTTP request."""
    operations: list[str] = []

    def on_send(request: Any, **_: Any) -> None:
        operations.append(request.headers["X-Amz-Target"].decode().rsplit(".", 1)[-1])

    services.dynamodb.meta.events.register("before-send.dynamodb", on_send)
    return operations


@dataclass
class Setting:
    """Alice, a member of Bob's workspace, and each kind of credential she can hold."""

    api: Api
    workspace: str
    tokens: dict[str, str]

    def credential(self, kind: str) -> str:
        return self.tokens[kind]


@pytest.fixture
def setting(api: Api, alice: str, bob: str) -> Setting:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    tokens = {
        "located workspace key": api.create_key(alice, category="workspace", workspaceId=ws)[
            "key"
        ],
        "located admin key": api.create_key(alice)["key"],
        "plain workspace key": mint_plain_key(api.services, "usr_alice", ws),
        "plain admin key": mint_plain_key(api.services, "usr_alice"),
        "legacy workspace key": LEGACY,
        "user token": alice,
    }
    tokens["delegated token"] = delegated(api, tokens["located workspace key"])
    tokens["delegated token of a user"] = delegated(api, alice, workspace_id=ws)
    import_keys(
        api.services,
        [LegacyKey("usr_alice", "old", category="workspace", workspace_id=ws, plaintext=LEGACY)],
    )
    return Setting(api, ws, tokens)


BATCH = ["BatchGetItem"]
KEY_THEN_MEMBERSHIP = ["GetItem", "GetItem"]
# (credential, sends X-Workspace-Id, path the authorizer is asked about, expected operations)
CASES = [
    ("located workspace key", True, MEMORY, BATCH),
    ("located workspace key", False, MEMORY, BATCH),
    ("located admin key", True, MEMORY, BATCH),
    ("located admin key", False, WORKSPACES, ["GetItem"]),
    ("plain workspace key", True, MEMORY, KEY_THEN_MEMBERSHIP),
    ("plain workspace key", False, MEMORY, KEY_THEN_MEMBERSHIP),
    ("plain admin key", True, MEMORY, KEY_THEN_MEMBERSHIP),
    ("legacy workspace key", True, MEMORY, KEY_THEN_MEMBERSHIP),
    # Its sign-in with the membership; its sign-in alone when no workspace is named.
    ("user token", True, MEMORY, BATCH),
    ("user token", False, WORKSPACES, ["GetItem"]),
    # The root key and the membership together: a revoked root refuses on the next request.
    ("delegated token", True, MEMORY, BATCH),
    ("delegated token", False, MEMORY, BATCH),
    # Its root's sign-in and the membership together: signing out refuses it.
    ("delegated token of a user", True, MEMORY, BATCH),
]
IDS = [f"{kind}{' + workspace' if header else ''}" for kind, header, _, _ in CASES]


@pytest.mark.parametrize(("kind", "header", "path", "expected"), CASES, ids=IDS)
def test_the_authorizer_reads_the_store_this_many_times_per_decision(
    setting: Setting,
    authorize: Invoke,
    sent: list[str],
    kind: str,
    header: bool,
    path: str,
    expected: list[str],
) -> None:
    event = request_event(
        path, bearer(setting.credential(kind)), setting.workspace if header else None
    )
    authorize(event)  # a container's first decision also fetches the signing keys (KMS)
    sent.clear()

    answer = authorize(event)

    assert effect(answer) == "Allow"
    assert answer["context"]["userId"] == "usr_alice"
    assert sent == expected


@pytest.mark.parametrize(("kind", "header", "path", "expected"), CASES, ids=IDS)
def test_the_routes_read_the_store_as_often_as_the_authorizer(
    setting: Setting, sent: list[str], kind: str, header: bool, path: str, expected: list[str]
) -> None:
    if path == WORKSPACES and kind != "user token":
        expected = ["GetItem"]  # whoami reads the key alone, as the authorizer does here
    if kind == "user token":
        # The decision reads what the authorizer reads; then whoami, an answer about a person,
        # reads their profile (email, name). It is not part of the decision.
        expected = [*expected, "GetItem"]
    credential = setting.credential(kind)
    workspace = setting.workspace if header else None
    setting.api.call("GET", WHOAMI, credential, workspace=workspace)
    sent.clear()

    answer = setting.api.call("GET", WHOAMI, credential, workspace=workspace)

    assert answer.status == 200
    assert answer.json["userId"] == "usr_alice"
    assert sent == expected


def test_a_key_minted_before_keeps_working_with_two_reads(
    api: Api, alice: str, sent: list[str]
) -> None:
    ws = api.workspace(alice)
    plain = mint_plain_key(api.services, "usr_alice", ws)
    sent.clear()

    answer = api.call("GET", WHOAMI, plain)

    assert answer.status == 200
    assert (answer.json["userId"], answer.json["workspaceId"]) == ("usr_alice", ws)
    assert sent == KEY_THEN_MEMBERSHIP


# -- the ids a key carries are hints; the stored record decides ----------------------------


def forge(plaintext: str, old: str, new: str) -> str:
    """The key with one embedded id replaced and its checksum recomputed: well-formed."""
    rest = plaintext[:-CHECKSUM_LENGTH].replace(old, new)
    forged = rest + checksum(rest)
    assert parse_key(forged) is not None
    return forged


@pytest.mark.parametrize("altered", ["owner", "workspace"])
def test_a_key_whose_embedded_ids_were_altered_is_refused(
    api: Api, alice: str, bob: str, authorize: Invoke, altered: str
) -> None:
    ws, other = api.workspace(bob), api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    key = api.create_key(alice, category="workspace", workspaceId=ws)["key"]
    if altered == "owner":  # Bob is a member of the workspace: only the record can tell
        forged = forge(key, "5alice", "3bob")
    else:
        forged = forge(key, ws.removeprefix("ws_"), other.removeprefix("ws_"))

    answer = api.call("GET", WHOAMI, forged)

    assert answer.status == 401
    assert answer.code == "invalid_credentials"
    with pytest.raises(Unauthorized):
        authorize(request_event(MEMORY, bearer(forged), None))


def test_a_record_that_disagrees_with_the_ids_its_key_carries_is_refused(
    api: Api, alice: str, bob: str, authorize: Invoke
) -> None:
    # A stored record for Bob under the hash of a key that names Alice: the one case where the
    # hash finds a record and the ids still disagree. Alice is a member of the workspace and
    # Bob is not, so trusting the key's ids would answer for Bob with Alice's membership.
    ws = api.workspace(alice)
    alices = api.create_key(alice, category="workspace", workspaceId=ws)
    found = api.services.key_store.get_with_ciphertext("usr_alice", alices["id"])
    assert found is not None
    record = found[0]
    impostor = generate_key("usr_alice", ws)
    bobs = replace(
        record, id=alices["id"][:-1] + "Z", owner_id="usr_bob", key_hash=hash_secret(impostor)
    )
    api.services.key_store.create(bobs, None, bobs.created_at)

    answer = api.call("GET", WHOAMI, impostor)

    assert answer.status == 401
    assert answer.code == "invalid_credentials"
    with pytest.raises(Unauthorized):
        authorize(request_event(MEMORY, bearer(impostor), ws))


def test_a_workload_token_reads_its_trust_policy_once_and_no_membership(
    api: Api, alice: str, authorize: Invoke, sent: list[str]
) -> None:
    """Issue 23: one GetItem (the policy); a workload is not a user, so no membership."""
    from chalicelib import ids
    from chalicelib.workloads.model import TrustPolicy

    ws = api.workspace(alice)
    now = api.services.clock.now()
    policy = TrustPolicy(
        ids.new_trust_policy_id(now), ws, "ci", "https://ci.example", "memory-service",
        "repo:acme/agents:*", {}, ("memory",), 900, now, "usr_alice",
    )
    api.services.trust_policies.create(policy)
    extra = {"workspace_id": ws, "scope": "memory", "policy": policy.id,
             "act": {"sub": "repo:acme/agents:main", "iss": policy.issuer}}
    token = api.services.signer.mint("wl_bench", extra=extra, lifetime=600).token
    event = request_event(MEMORY, bearer(token), ws)
    authorize(event)  # a container's first decision also fetches the signing keys (KMS)
    sent.clear()

    answer = authorize(event)

    assert effect(answer) == "Allow"
    assert sent == ["GetItem"]


def test_a_service_client_token_reads_its_client_once_and_no_membership(
    api: Api, alice: str, authorize: Invoke, sent: list[str]
) -> None:
    """Issue 36: one GetItem (the client's item); a machine is not a member."""
    from chalicelib import ids
    from chalicelib.service_clients.model import ServiceClient

    ws = api.workspace(alice)
    now = api.services.clock.now()
    jwk = {"kty": "EC", "crv": "P-256", "x": "x", "y": "y", "kid": "k1", "alg": "ES256"}
    client = ServiceClient(
        ids.new_service_client_id(now), ws, "sync", ("memory",), (jwk,), None, now, "usr_alice"
    )
    api.services.service_clients.create(client)
    extra = {"client_id": client.id, "workspace_id": ws, "scope": "memory"}
    token = api.services.signer.mint(client.id, extra=extra, lifetime=600).token
    event = request_event(MEMORY, bearer(token), ws)
    authorize(event)  # a container's first decision also fetches the signing keys (KMS)
    sent.clear()

    answer = authorize(event)

    assert effect(answer) == "Allow"
    assert answer["context"]["credential"] == "service_client"
    assert sent == ["GetItem"]


# -- revocation and removal stay effective on the very next request -----------------------


def test_a_removed_members_located_keys_are_refused_on_the_next_request(
    api: Api, alice: str, bob: str, authorize: Invoke, sent: list[str]
) -> None:
    ws = api.workspace(bob)
    api.add_member(bob, ws, "usr_alice")
    bound = api.create_key(alice, category="workspace", workspaceId=ws)["key"]
    admin = api.create_key(alice)["key"]
    assert effect(authorize(request_event(MEMORY, bearer(bound), None))) == "Allow"
    assert effect(authorize(request_event(MEMORY, bearer(admin), ws))) == "Allow"

    assert api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_alice", bob).status == 204
    sent.clear()

    for key, header in ((bound, None), (admin, ws)):
        answer = authorize(request_event(MEMORY, bearer(key), header))
        assert effect(answer) == "Deny"
        assert answer["context"] == {"code": "not_a_member"}
        routes = api.call("GET", WHOAMI, key, workspace=header)
        assert (routes.status, routes.code) == (403, "not_a_member")
    assert sent == BATCH * 4  # still one round trip each: no cache answered


def test_a_revoked_located_key_is_refused_on_the_next_request(
    api: Api, alice: str, authorize: Invoke, sent: list[str]
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)
    assert effect(authorize(request_event(MEMORY, bearer(key["key"]), ws))) == "Allow"

    assert api.call("DELETE", f"/v1/auth/api-keys/{key['id']}", alice).status == 204
    sent.clear()

    with pytest.raises(Unauthorized):
        authorize(request_event(MEMORY, bearer(key["key"]), ws))
    answer = api.call("GET", WHOAMI, key["key"], workspace=ws)
    assert (answer.status, answer.code) == (401, "revoked_credentials")
    assert sent == BATCH * 2


# -- fail closed ---------------------------------------------------------------------------


@pytest.mark.parametrize("failure", [broken, throttled], ids=["unreachable", "throttled"])
def test_a_failing_batch_read_raises_in_the_authorizer_and_is_503_in_the_routes(
    api: Api,
    alice: str,
    authorize: Invoke,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
    failure: Callable[..., Any],
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)["key"]
    monkeypatch.setattr(services.dynamodb, "batch_get_item", failure)

    with pytest.raises(DependencyUnavailable) as raised:
        authorize(request_event(MEMORY, bearer(key), ws))
    answer = api.call("GET", WHOAMI, key, workspace=ws)

    assert str(raised.value) != "Unauthorized"  # API Gateway answers 500, never Allow
    assert (answer.status, answer.code) == (503, "dependency_unavailable")
    assert key.encode() not in answer.body
