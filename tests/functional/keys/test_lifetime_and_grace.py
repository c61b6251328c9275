"""A key's chosen lifetime (`expiresInDays`) and rotation with a grace period (moved clock)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.api.keys import problem
from chalicelib.clock import FrozenClock, parse_rfc3339
from chalicelib.keys.model import ApiKey
from chalicelib.keys.refusals import KeyRefused, Rule
from tests.functional.conftest import Answer, Api

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
HOUR = 3600


def rotate(api: Api, credential: str, key_id: str, grace: int | None = None) -> Answer:
    body = None if grace is None else {"gracePeriodSeconds": grace}
    return api.call("POST", f"{KEYS}/{key_id}/rotate", credential, body=body)


def get(api: Api, credential: str, key_id: str) -> dict[str, Any]:
    answer = api.call("GET", f"{KEYS}/{key_id}", credential)
    assert answer.status == 200, answer.body
    return dict(answer.json)


def moment(text: str) -> Any:
    return parse_rfc3339(text)


def owned_key(api: Api, key_id: str) -> ApiKey:
    """Alice's key as the store reads it now: a stale copy once something else changed it."""
    found = api.services.key_store.get_with_ciphertext("usr_alice", key_id)
    assert found is not None
    return found[0]


# -- chosen lifetime -------------------------------------------------------------------------


def test_a_key_lives_the_days_its_creator_chose(api: Api, alice: str, clock: FrozenClock) -> None:
    key = api.create_key(alice, expiresInDays=30)

    assert moment(key["expiresAt"]) - moment(key["createdAt"]) == timedelta(days=30)
    clock.advance(days=30, seconds=-1)
    assert api.call("GET", WHOAMI, key["key"]).status == 200
    clock.advance(seconds=1)
    assert api.call("GET", WHOAMI, key["key"]).code == "expired_credentials"


def test_without_expires_in_days_a_key_lives_ninety_days(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    assert moment(key["expiresAt"]) - moment(key["createdAt"]) == timedelta(days=90)


def test_a_one_day_key_is_accepted(api: Api, alice: str) -> None:
    key = api.create_key(alice, expiresInDays=1)

    assert moment(key["expiresAt"]) - moment(key["createdAt"]) == timedelta(days=1)


@pytest.mark.parametrize("days", [0, 91, -1, 1.5, "30", True, None, [30]])
def test_expires_in_days_outside_1_to_90_is_400_invalid_lifetime(
    api: Api, alice: str, days: object
) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "x", "expiresInDays": days})

    assert answer.status == 400
    assert answer.code == "invalid_lifetime"


def test_rotation_keeps_the_chosen_lifetime(api: Api, alice: str, clock: FrozenClock) -> None:
    old = api.create_key(alice, expiresInDays=10)
    clock.advance(days=4)

    new = rotate(api, alice, old["id"]).json

    assert moment(new["expiresAt"]) - moment(new["createdAt"]) == timedelta(days=10)
    assert moment(new["createdAt"]) == clock.now()


# -- rotation with a grace period ------------------------------------------------------------


def test_the_old_key_works_during_the_grace_and_is_refused_as_revoked_right_after(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    old = api.create_key(alice)
    rotated_at = clock.now()
    new = rotate(api, alice, old["id"], grace=HOUR).json

    during = get(api, alice, old["id"])
    assert during["status"] == "active"
    assert during["replacedBy"] == new["id"]
    assert during["revokedAt"] is None
    assert moment(during["expiresAt"]) == rotated_at + timedelta(hours=1)
    clock.advance(seconds=HOUR - 1)
    assert api.call("GET", WHOAMI, old["key"]).status == 200
    assert api.call("GET", WHOAMI, new["key"]).status == 200

    clock.advance(seconds=1)

    refused = api.call("GET", WHOAMI, old["key"])
    assert refused.status == 401
    assert refused.code == "revoked_credentials"
    after = get(api, alice, old["id"])
    assert after["status"] == "revoked"
    assert moment(after["revokedAt"]) == rotated_at + timedelta(hours=1)
    assert api.call("GET", WHOAMI, new["key"]).status == 200


def test_a_key_whose_grace_ended_is_retained_thirty_days_from_the_end(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    old = api.create_key(alice)
    rotate(api, alice, old["id"], grace=HOUR)
    clock.advance(hours=1, days=30, seconds=-1)
    token = api.token("usr_alice")
    assert get(api, token, old["id"])["status"] == "revoked"
    assert old["id"] in [k["id"] for k in api.call("GET", KEYS, token).json["keys"]]

    clock.advance(seconds=1)

    assert api.call("GET", f"{KEYS}/{old['id']}", token).status == 404
    assert old["id"] not in [k["id"] for k in api.call("GET", KEYS, token).json["keys"]]
    assert api.call("GET", WHOAMI, old["key"]).code == "invalid_credentials"


def test_a_grace_never_lets_a_key_live_longer_than_it_would_have(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    old = api.create_key(alice, expiresInDays=2)
    clock.advance(days=1)

    rotate(api, alice, old["id"], grace=7 * 24 * HOUR)

    assert get(api, alice, old["id"])["expiresAt"] == old["expiresAt"]
    clock.advance(days=1)
    assert api.call("GET", WHOAMI, old["key"]).code == "revoked_credentials"


def test_a_key_that_already_has_a_successor_cannot_be_rotated_again(
    api: Api, alice: str
) -> None:
    old = api.create_key(alice)
    assert rotate(api, alice, old["id"], grace=HOUR).status == 201

    again = rotate(api, alice, old["id"], grace=HOUR)

    assert again.status == 409
    assert again.code == "key_not_active"
    listed = api.call("GET", KEYS, alice).json["keys"]
    assert len(listed) == 2  # the old key and its one successor


def test_revoking_a_key_in_its_grace_ends_the_grace_at_once(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    old = api.create_key(alice)
    rotate(api, alice, old["id"], grace=24 * HOUR)
    clock.advance(minutes=5)

    assert api.call("DELETE", f"{KEYS}/{old['id']}", alice).status == 204

    assert api.call("GET", WHOAMI, old["key"]).code == "revoked_credentials"
    revoked = get(api, alice, old["id"])
    assert revoked["status"] == "revoked"
    assert moment(revoked["revokedAt"]) == clock.now()


def test_revoking_after_the_grace_ended_changes_nothing(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    old = api.create_key(alice)
    rotate(api, alice, old["id"], grace=HOUR)
    clock.advance(hours=2)
    token = api.token("usr_alice")
    before = get(api, token, old["id"])

    assert api.call("DELETE", f"{KEYS}/{old['id']}", token).status == 204

    assert get(api, token, old["id"]) == before


def test_the_longest_grace_is_seven_days(api: Api, alice: str, clock: FrozenClock) -> None:
    old = api.create_key(alice)

    assert rotate(api, alice, old["id"], grace=604800).status == 201

    clock.advance(days=7, seconds=-1)
    assert api.call("GET", WHOAMI, old["key"]).status == 200


def test_a_zero_grace_revokes_at_once_as_before(api: Api, alice: str) -> None:
    old = api.create_key(alice)

    assert rotate(api, alice, old["id"], grace=0).status == 201

    assert api.call("GET", WHOAMI, old["key"]).code == "revoked_credentials"
    assert get(api, alice, old["id"])["revokedAt"] is not None


@pytest.mark.parametrize("grace", [-1, 604801, 1.5, "60", True, None])
def test_a_grace_outside_0_to_7_days_is_400_invalid_grace_period(
    api: Api, alice: str, grace: object
) -> None:
    key = api.create_key(alice)

    answer = api.call(
        "POST", f"{KEYS}/{key['id']}/rotate", alice, body={"gracePeriodSeconds": grace}
    )

    assert answer.status == 400
    assert answer.code == "invalid_grace_period"
    assert api.call("GET", WHOAMI, key["key"]).status == 200


def test_an_unknown_rotate_field_is_400(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    answer = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice, body={"grace": 60})

    assert answer.status == 400
    assert answer.code == "unknown_field"


# -- races: the store's conditions, met with stale reads -------------------------------------


def test_a_rotation_that_read_the_key_before_a_revocation_loses_with_409(
    api: Api, alice: str
) -> None:
    key = api.create_key(alice)
    principal = api.services.resolver.resolve(f"Bearer {alice}", None)
    stale = owned_key(api, key["id"])
    assert api.call("DELETE", f"{KEYS}/{key['id']}", alice).status == 204

    with pytest.raises(KeyRefused) as lost:
        api.services.key_service.rotate(principal, stale, timedelta(hours=1))  # type: ignore[arg-type]

    assert lost.value.refusal.rule is Rule.KEY_NOT_ACTIVE
    assert problem(lost.value.refusal).status == 409
    assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"
    assert get(api, alice, key["id"])["status"] == "revoked"


def test_a_revocation_that_read_the_key_before_a_grace_rotation_still_revokes_it(
    api: Api, alice: str
) -> None:
    key = api.create_key(alice)
    principal = api.services.resolver.resolve(f"Bearer {alice}", None)
    stale = owned_key(api, key["id"])
    assert rotate(api, alice, key["id"], grace=HOUR).status == 201

    api.services.key_service.revoke(principal, stale)  # type: ignore[arg-type]

    assert api.call("GET", WHOAMI, key["key"]).code == "revoked_credentials"
    assert get(api, alice, key["id"])["status"] == "revoked"


def test_of_two_grace_rotations_from_one_read_exactly_one_wins(api: Api, alice: str) -> None:
    key = api.create_key(alice)
    principal = api.services.resolver.resolve(f"Bearer {alice}", None)
    stale = owned_key(api, key["id"])
    api.services.key_service.rotate(principal, stale, timedelta(hours=1))  # type: ignore[arg-type]

    with pytest.raises(KeyRefused) as lost:
        api.services.key_service.rotate(principal, stale, timedelta(hours=1))  # type: ignore[arg-type]

    assert problem(lost.value.refusal).code == "key_not_active"
    assert len(api.call("GET", KEYS, alice).json["keys"]) == 2
