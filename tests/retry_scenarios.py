"""Each state-changing call, with a failure injected at each AWS call it makes, then retried.

Shared by the functional tests (chalice.test.Client on moto) and the end-to-end tests (the
local stack over real HTTP), which each supply a `Service`. A scenario arms one `Fault`
(`local/faults.py`) for its request, then behaves like a client that follows the README's
retry contract: on a 503 it retries (with the same Idempotency-Key or refresh token), or
does what the 503's detail says. It asserts the end state is exactly that of one successful
call, and that no answer was a 500. `every_call` runs a scenario with the fault at call 0,
1, 2, … until the request made fewer calls than that: each AWS call of the path is covered.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from local.faults import Fault

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
EXCHANGE = "/v1/auth/exchange"
REFRESH = "/v1/auth/refresh"
REVOKE = "/v1/auth/revoke"
WORKSPACES = "/v1/workspaces"
CLIENT_RETRIES = 3


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: dict[str, str]

    @property
    def detail(self) -> str:
        body = self.body if isinstance(self.body, dict) else {}
        return str(body.get("detail") or body.get("error_description") or "")


class Service(Protocol):
    def call(
        self,
        method: str,
        path: str,
        credential: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Reply: ...

    def arm(self, fault: Fault | None) -> None:
        """Fail the fault's call of the next request (None: nothing)."""

    def fired(self) -> bool:
        """Whether the armed fault's call was reached."""

    def operations(self) -> list[str]:
        """The AWS calls ("dynamodb.TransactWriteItems") made since the fault was armed."""

    def user_token(self) -> str:
        """A token for a new user who exists (signed in), made while no fault is armed."""

    def id_token(self, subject: str) -> str:
        """An ID token of a trusted issuer for `subject`."""


@dataclass
class Outcome:
    fired: bool
    statuses: list[int] = field(default_factory=list)
    faulted: str | None = None  # the operation the fault hit


# The writes of a change (no transactions: each a single-item write). Each is sent a second
# time when its first send failed, so one fault at a write never fails the request; a 503
# that says the change may have happened can only follow a write.
WRITES = ("dynamodb.PutItem", "dynamodb.UpdateItem", "dynamodb.DeleteItem")


def first_attempt(
    service: Service, fault: Fault, send: Callable[[], Reply], outcome: Outcome
) -> Reply:
    service.arm(fault)
    try:
        answer = send()
        outcome.fired = service.fired()
        if outcome.fired:
            outcome.faulted = service.operations()[fault.call]
    finally:
        service.arm(None)
    outcome.statuses.append(answer.status)
    return answer


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:16]}"


def with_fault(
    service: Service, fault: Fault, send: Callable[[], Reply], outcome: Outcome
) -> Reply:
    """`send` once with `fault` armed, then again while it answers 503 (a client's retries)."""
    answer = first_attempt(service, fault, send, outcome)
    while answer.status == 503 and len(outcome.statuses) <= CLIENT_RETRIES:
        answer = send()
        outcome.statuses.append(answer.status)
    return answer


def check_statuses(outcome: Outcome, success: int) -> None:
    assert 500 not in outcome.statuses, outcome.statuses
    assert set(outcome.statuses) <= {success, 503}, outcome.statuses
    assert outcome.statuses[-1] == success, outcome.statuses


def listed_keys(service: Service, token: str) -> list[dict[str, Any]]:
    answer = service.call("GET", KEYS, token)
    assert answer.status == 200, answer.body
    return list(answer.body["keys"])


def works(service: Service, credential: str) -> bool:
    return service.call("GET", WHOAMI, credential).status == 200


# -- scenarios: each returns whether the fault's call was reached ---------------------------


def create_with_idempotency_key(service: Service, fault: Fault) -> Outcome:
    token, outcome = service.user_token(), Outcome(False)
    headers = {"Idempotency-Key": unique("create-")}

    def send() -> Reply:
        return service.call("POST", KEYS, token, body={"label": "ci"}, headers=headers)

    first_answers: list[Reply] = []
    final = with_fault(service, fault, lambda: _kept(first_answers, send()), outcome)
    check_statuses(outcome, 201)
    created = [a.body for a in first_answers if a.status == 201]
    assert all((c["id"], c["key"]) == (final.body["id"], final.body["key"]) for c in created)
    assert [k["id"] for k in listed_keys(service, token)] == [final.body["id"]]
    assert works(service, final.body["key"])
    return outcome


def create_without_idempotency_key(service: Service, fault: Fault) -> Outcome:
    """Without the header a 503 says the key may exist; the client looks before it retries."""
    token, outcome = service.user_token(), Outcome(False)
    label = unique("ci-")

    def send() -> Reply:
        existing = [k for k in listed_keys(service, token) if k["label"] == label]
        if existing:  # the lost create happened: recover its plaintext instead of creating
            return service.call("GET", f"{KEYS}/{existing[0]['id']}/reveal", token)
        return service.call("POST", KEYS, token, body={"label": label})

    first = first_attempt(
        service, fault, lambda: service.call("POST", KEYS, token, body={"label": label}), outcome
    )
    answer = first
    if first.status == 503:
        # Only a failed write may say it may have happened; a failure before it, only retry.
        assert "may have been created" not in first.detail or outcome.faulted in WRITES
        while answer.status == 503 and len(outcome.statuses) <= CLIENT_RETRIES:
            answer = send()
            outcome.statuses.append(answer.status)
    assert 500 not in outcome.statuses, outcome.statuses
    assert answer.status in (200, 201), outcome.statuses
    assert [k["id"] for k in listed_keys(service, token)] == [answer.body["id"]]
    assert works(service, answer.body["key"])
    return outcome


def rotate_with_idempotency_key(service: Service, fault: Fault) -> Outcome:
    token, outcome = service.user_token(), Outcome(False)
    old = service.call("POST", KEYS, token, body={"label": "ci"}).body
    headers = {"Idempotency-Key": unique("rotate-")}

    def send() -> Reply:
        return service.call("POST", f"{KEYS}/{old['id']}/rotate", token, headers=headers)

    final = with_fault(service, fault, send, outcome)
    check_statuses(outcome, 201)
    _assert_rotated_once(service, token, old, final.body)
    return outcome


def rotate_without_idempotency_key(service: Service, fault: Fault) -> Outcome:
    """Without the header a 503 tells how to check: GET the old key, look at replacedBy."""
    token, outcome = service.user_token(), Outcome(False)
    old = service.call("POST", KEYS, token, body={"label": "ci"}).body
    rotate_path = f"{KEYS}/{old['id']}/rotate"

    def send() -> Reply:
        successor = service.call("GET", f"{KEYS}/{old['id']}", token).body["replacedBy"]
        if successor:  # the rotation happened: the new key is revealable
            return service.call("GET", f"{KEYS}/{successor}/reveal", token)
        return service.call("POST", rotate_path, token)

    first = first_attempt(service, fault, lambda: service.call("POST", rotate_path, token), outcome)
    answer = first
    if first.status == 503:
        assert "replacedBy" not in first.detail or outcome.faulted in WRITES, first.detail
        while answer.status == 503 and len(outcome.statuses) <= CLIENT_RETRIES:
            answer = send()
            outcome.statuses.append(answer.status)
    assert 500 not in outcome.statuses, outcome.statuses
    assert answer.status in (200, 201), outcome.statuses
    _assert_rotated_once(service, token, old, answer.body)
    return outcome


def _assert_rotated_once(
    service: Service, token: str, old: dict[str, Any], new: dict[str, Any]
) -> None:
    keys = {k["id"]: k for k in listed_keys(service, token)}
    assert set(keys) == {old["id"], new["id"]}
    assert (keys[old["id"]]["status"], keys[old["id"]]["replacedBy"]) == ("revoked", new["id"])
    assert keys[new["id"]]["status"] == "active"
    assert works(service, new["key"])
    assert not works(service, old["key"])


def revoke(service: Service, fault: Fault) -> Outcome:
    token, outcome = service.user_token(), Outcome(False)
    key = service.call("POST", KEYS, token, body={"label": "ci"}).body

    path = f"{KEYS}/{key['id']}"
    with_fault(service, fault, lambda: service.call("DELETE", path, token), outcome)
    check_statuses(outcome, 204)
    refused = service.call("GET", WHOAMI, key["key"])
    assert (refused.status, refused.body["code"]) == (401, "revoked_credentials")
    assert [(k["id"], k["status"]) for k in listed_keys(service, token)] == [(key["id"], "revoked")]
    return outcome


def refresh(service: Service, fault: Fault) -> Outcome:
    outcome = Outcome(False)
    signed_in = service.call("POST", EXCHANGE, body={"id_token": service.id_token(unique("s"))})
    assert signed_in.status == 200, signed_in.body
    sent = {"refresh_token": signed_in.body["refresh_token"]}

    final = with_fault(service, fault, lambda: service.call("POST", REFRESH, body=sent), outcome)
    check_statuses(outcome, 200)
    assert works(service, final.body["access_token"])
    _assert_family_intact(service, final.body["refresh_token"])
    return outcome


def exchange(service: Service, fault: Fault) -> Outcome:
    outcome = Outcome(False)
    subject = unique("s")
    sent = {"id_token": service.id_token(subject)}

    final = with_fault(service, fault, lambda: service.call("POST", EXCHANGE, body=sent), outcome)
    check_statuses(outcome, 200)
    user = service.call("GET", WHOAMI, final.body["access_token"]).body["userId"]
    again = service.call("POST", EXCHANGE, body={"id_token": service.id_token(subject)}).body
    assert service.call("GET", WHOAMI, again["access_token"]).body["userId"] == user  # one user
    _assert_family_intact(service, final.body["refresh_token"])
    return outcome


def sign_out(service: Service, fault: Fault) -> Outcome:
    """Sign-out ends the sign-in, its access token with it, whichever call failed."""
    outcome = Outcome(False)
    signed_in = service.call("POST", EXCHANGE, body={"id_token": service.id_token(unique("s"))})
    assert signed_in.status == 200, signed_in.body
    sent = {"token": signed_in.body["refresh_token"]}

    with_fault(service, fault, lambda: service.call("POST", REVOKE, body=sent), outcome)
    check_statuses(outcome, 200)
    refused = service.call("GET", WHOAMI, signed_in.body["access_token"])
    assert (refused.status, refused.body["code"]) == (401, "revoked_credentials")
    again = service.call("POST", REFRESH, body={"refresh_token": sent["token"]})
    assert (again.status, again.body["error"]) == (400, "invalid_grant")
    return outcome


def _assert_family_intact(service: Service, refresh_token: str) -> None:
    """The sign-in lives on: its newest token refreshes, and so does the one after."""
    for _ in range(2):
        answer = service.call("POST", REFRESH, body={"refresh_token": refresh_token})
        assert answer.status == 200, answer.body
        refresh_token = answer.body["refresh_token"]


def create_workspace_with_idempotency_key(service: Service, fault: Fault) -> Outcome:
    token, outcome = service.user_token(), Outcome(False)
    headers = {"Idempotency-Key": unique("workspace-")}

    def send() -> Reply:
        return service.call("POST", WORKSPACES, token, body={"name": "Team"}, headers=headers)

    final = with_fault(service, fault, send, outcome)
    check_statuses(outcome, 201)
    listed = service.call("GET", WORKSPACES, token).body["workspaces"]
    assert [w["id"] for w in listed] == [final.body["id"]]
    return outcome


def remove_member(service: Service, fault: Fault) -> Outcome:
    """A 404 after a 503 means the member is gone: the lost removal happened."""
    owner, member, outcome = service.user_token(), service.user_token(), Outcome(False)
    workspace = service.call("POST", WORKSPACES, owner, body={"name": "Team"}).body["id"]
    member_id = service.call("GET", WHOAMI, member).body["userId"]
    path = f"{WORKSPACES}/{workspace}/members/{member_id}"
    assert service.call("PUT", path, owner).status == 201

    final = with_fault(service, fault, lambda: service.call("DELETE", path, owner), outcome)
    assert 500 not in outcome.statuses, outcome.statuses
    assert final.status == 204 or (final.status == 404 and 503 in outcome.statuses)
    members = service.call("GET", f"{WORKSPACES}/{workspace}/members", owner).body["members"]
    assert [m["userId"] for m in members] == [service.call("GET", WHOAMI, owner).body["userId"]]
    assert service.call("GET", WHOAMI, member, headers={"X-Workspace-Id": workspace}).status == 403
    return outcome


def _kept(answers: list[Reply], answer: Reply) -> Reply:
    answers.append(answer)
    return answer


SCENARIOS: dict[str, Callable[[Service, Fault], Outcome]] = {
    "create": create_with_idempotency_key,
    "create-without-idempotency-key": create_without_idempotency_key,
    "rotate": rotate_with_idempotency_key,
    "rotate-without-idempotency-key": rotate_without_idempotency_key,
    "revoke": revoke,
    "refresh": refresh,
    "exchange": exchange,
    "sign-out": sign_out,
    "create-workspace": create_workspace_with_idempotency_key,
    "remove-member": remove_member,
}


def every_call(service: Service, scenario: Callable[[Service, Fault], Outcome], kind: str) -> int:
    """Runs `scenario` with a `kind` fault at each AWS call of its request; the calls covered."""
    call = 0
    while scenario(service, Fault(call, kind)).fired:
        call += 1
    assert call > 0, "the request made no AWS call at all"
    return call
