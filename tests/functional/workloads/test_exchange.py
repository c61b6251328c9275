"""The exchange of a workload's OIDC token (subject_token_type jwt) under a trust policy: every
condition a policy states, every refusal, and the workload token it answers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

import jwt
import pytest

from chalicelib.clock import FrozenClock
from chalicelib.workloads.exchange import NOT_ACCEPTED
from chalicelib.workloads.issuers import MAX_CACHE, REFRESH_COOLDOWN
from chalicelib.workloads.model import workload_subject
from tests.functional.conftest import Answer, Api
from tests.functional.workloads.conftest import LogLines, create_policy, exchange
from tests.workload_issuer import AUDIENCE, GITHUB, REPO_SUBJECT, FakeFetcher, WorkloadIssuer

pytestmark = pytest.mark.usefixtures("fetcher")


def claims_of(answer: Answer) -> dict[str, Any]:
    return dict(jwt.decode(answer.json["access_token"], options={"verify_signature": False}))


def refused_as_no_match(answer: Answer) -> bool:
    """The one answer to every refusal of a workload token."""
    return (answer.status, answer.json) == (
        400,
        {"error": "invalid_grant", "error_description": NOT_ACCEPTED},
    )


def refusal_reasons(log_lines: LogLines) -> list[str]:
    return [record["reason"] for record in log_lines.of("workload token refused")]


@pytest.fixture
def policy(api: Api, alice: str, workspace: str) -> dict[str, Any]:
    return dict(create_policy(api, alice, workspace).json)


def test_a_workload_exchanges_its_token_for_a_workspace_token(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    answer = exchange(api, issuer.token(), workspace)

    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.json
    assert set(body) == {"access_token", "issued_token_type", "token_type", "expires_in", "scope"}
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    assert (body["token_type"], body["scope"]) == ("Bearer", "memory entities")
    assert 0 < body["expires_in"] <= 900
    claims = claims_of(answer)
    assert claims["sub"] == workload_subject(policy["id"], REPO_SUBJECT)
    assert claims["sub"].startswith("wl_")
    assert claims["workspace_id"] == workspace
    assert claims["policy"] == policy["id"]
    assert claims["scope"] == "memory entities"
    assert claims["act"] == {"sub": REPO_SUBJECT, "iss": GITHUB}
    assert jwt.get_unverified_header(body["access_token"])["alg"] == "RS256"


def test_the_workload_sub_is_stable_per_policy_and_workload(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    first = claims_of(exchange(api, issuer.token(), workspace))["sub"]
    again = claims_of(exchange(api, issuer.token(), workspace))["sub"]
    other = claims_of(exchange(api, issuer.token("repo:acme/agents:ref:refs/heads/dev"), workspace))

    assert first == again
    assert other["sub"] != first


def test_an_es256_token_is_accepted(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    answer = exchange(api, issuer.token(alg="ES256"), workspace)

    assert answer.status == 200


def test_the_token_never_outlives_the_policy_maximum_nor_the_subject_token(
    api: Api, alice: str, issuer: WorkloadIssuer, workspace: str
) -> None:
    create_policy(api, alice, workspace, maxLifetimeSeconds=120)
    short_subject = issuer.token(lifetime=90)
    long_subject = issuer.token(lifetime=3000)

    capped_by_subject = exchange(api, short_subject, workspace)
    capped_by_policy = exchange(api, long_subject, workspace)

    assert capped_by_subject.json["expires_in"] < 120  # the subject's end came first
    assert (
        claims_of(capped_by_subject)["exp"]
        <= jwt.decode(short_subject, options={"verify_signature": False})["exp"]
    )
    assert capped_by_policy.json["expires_in"] == 120


@pytest.mark.parametrize(
    "token_change",
    [
        pytest.param({"iss": "https://gitlab.example.com"}, id="wrong issuer"),
        pytest.param({"audience": "another-service"}, id="wrong audience"),
        pytest.param({"subject": "repo:evil/agents:ref:refs/heads/main"}, id="wrong subject"),
        pytest.param({"repository_owner": "evil"}, id="claim differs"),
        pytest.param({"repository_owner": None}, id="claim missing"),
    ],
)
def test_a_token_that_matches_no_policy_is_refused_without_saying_why(
    api: Api,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    token_change: dict[str, Any],
) -> None:
    change = dict(token_change)
    subject = change.pop("subject", REPO_SUBJECT)
    if "iss" in change:  # another issuer that the fetcher also serves
        other = WorkloadIssuer(change.pop("iss"))
        api.services.workload_issuer_keys._fetcher.issuers[other.issuer] = other  # type: ignore[attr-defined]
        token = other.token(subject, **change)
    else:
        token = issuer.token(subject, **change)

    answer = exchange(api, token, workspace)

    assert refused_as_no_match(answer)


def test_an_audience_list_holding_the_policys_audience_matches(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    answer = exchange(api, issuer.token(audience=["other", AUDIENCE]), workspace)

    assert answer.status == 200


def test_a_prefix_subject_matches_only_its_prefix(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    branch = exchange(api, issuer.token("repo:acme/agents:ref:refs/heads/feature"), workspace)
    tag = exchange(api, issuer.token("repo:acme/agents:ref:refs/tags/v1"), workspace)

    assert branch.status == 200
    assert refused_as_no_match(tag)


def test_a_policy_of_another_workspace_does_not_apply(
    api: Api, alice: str, issuer: WorkloadIssuer, policy: dict[str, Any]
) -> None:
    other = api.workspace(alice, "Other")

    answer = exchange(api, issuer.token(), other)

    assert refused_as_no_match(answer)


def test_the_first_matching_policy_in_creation_order_wins(
    api: Api, alice: str, issuer: WorkloadIssuer, workspace: str
) -> None:
    first = create_policy(api, alice, workspace, name="first", scopes=["memory"]).json
    create_policy(api, alice, workspace, name="second", scopes=["skills"])

    answer = exchange(api, issuer.token(), workspace)

    assert claims_of(answer)["policy"] == first["id"]
    assert answer.json["scope"] == "memory"


def test_a_narrower_scope_may_be_asked_and_a_wider_one_is_refused(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any]
) -> None:
    narrower = exchange(api, issuer.token(), workspace, scope="memory")
    wider = exchange(api, issuer.token(), workspace, scope="memory skills")

    assert narrower.json["scope"] == "memory"
    assert (wider.status, wider.json["error"]) == (400, "invalid_scope")


def test_the_workspace_is_required(
    api: Api, issuer: WorkloadIssuer, policy: dict[str, Any]
) -> None:
    answer = exchange(api, issuer.token(), None)

    assert (answer.status, answer.json["error"]) == (400, "invalid_request")
    assert "workspace_id" in answer.json["error_description"]


def test_an_expired_token_is_refused_as_400_invalid_grant_the_log_saying_expired(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    now = int(time.time())
    answer = exchange(api, issuer.token(iat=now - 3600, nbf=now - 3600, exp=now - 600), workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == ["expired"]


@pytest.mark.parametrize("missing", ["exp", "iat"])
def test_a_token_without_exp_or_iat_is_refused_as_400_invalid_grant(
    api: Api,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    missing: str,
    log_lines: LogLines,
) -> None:
    without: dict[str, Any] = {missing: None}
    answer = exchange(api, issuer.token(**without), workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == [f"no {missing} claim"]


def test_a_token_living_longer_than_24_hours_is_refused_as_400_invalid_grant(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    answer = exchange(api, issuer.token(lifetime=24 * 3600 + 1), workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == ["it lives longer than 24 hours"]


def test_an_unknown_kid_refreshes_the_key_set_once_then_is_refused(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    exchange(api, issuer.token(), workspace)  # the key set is cached now
    fetcher.now += REFRESH_COOLDOWN  # long enough ago that an unknown kid may refresh it
    before = fetcher.jwks_fetches

    first = exchange(api, issuer.token(kid="made-up"), workspace)
    second = exchange(api, issuer.token(kid="made-up-too"), workspace)

    assert refused_as_no_match(first)
    assert refused_as_no_match(second)
    assert fetcher.jwks_fetches == before + 1  # the second within the cooldown: no fetch


def test_a_new_issuer_key_is_found_by_refreshing_on_its_kid(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    exchange(api, issuer.token(), workspace)
    issuer.rotate()
    fetcher.now += REFRESH_COOLDOWN

    answer = exchange(api, issuer.token(), workspace)

    assert answer.status == 200


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forged(header: dict[str, Any], claims: dict[str, Any], key: bytes) -> str:
    signing_input = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    if header["alg"] == "none":
        return signing_input + "."
    return (
        signing_input + "." + _b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())
    )


@pytest.mark.parametrize("alg", ["none", "HS256"])
def test_alg_none_and_hmac_tokens_are_refused(
    api: Api,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    alg: str,
    log_lines: LogLines,
) -> None:
    # HS256 keyed with the issuer's public key: the key-confusion forgery.
    token = _forged(
        {"alg": alg, "kid": issuer.rsa_jwk["kid"]},
        issuer.claims(),
        json.dumps(issuer.rsa_jwk).encode(),
    )

    answer = exchange(api, token, workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == ["not signed with RS256 or ES256"]


def test_a_token_signed_by_another_key_under_the_issuers_kid_is_refused(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    impostor = WorkloadIssuer()  # another RSA key, the same issuer name
    token = impostor.token(kid=issuer.rsa_jwk["kid"])

    answer = exchange(api, token, workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == ["signature not valid"]


def test_an_rs256_header_over_an_ec_key_is_refused(
    api: Api, issuer: WorkloadIssuer, workspace: str, policy: dict[str, Any], log_lines: LogLines
) -> None:
    answer = exchange(api, issuer.token(kid="ec-1"), workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == ["its algorithm does not match its key"]


def test_an_unverifiable_token_gets_the_same_400_whether_or_not_its_issuer_is_trusted(
    api: Api,
    alice: str,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    log_lines: LogLines,
) -> None:
    untrusting = api.workspace(alice, "Trusts nobody")
    impostor = WorkloadIssuer()  # the issuer's name and kid, another key: never verifies
    token = impostor.token(kid=issuer.rsa_jwk["kid"])

    at_trusting = exchange(api, token, workspace)
    at_untrusting = exchange(api, token, untrusting)

    assert refused_as_no_match(at_trusting)
    assert (at_trusting.status, at_trusting.body) == (at_untrusting.status, at_untrusting.body)
    assert at_trusting.headers == at_untrusting.headers
    refusals = log_lines.of("workload token refused")
    assert [(r["workspace_id"], r["issuer"], r["reason"]) for r in refusals] == [
        (workspace, GITHUB, "signature not valid"),
        (untrusting, GITHUB, "no trust policy of the workspace names this issuer"),
    ]
    assert token not in log_lines.text.getvalue()
    assert token.split(".")[2] not in log_lines.text.getvalue()


@pytest.mark.parametrize(
    ("token_of", "reason"),
    [
        pytest.param(lambda i: "not-a-jwt", "not a well-formed JWT", id="not a JWT"),
        pytest.param(lambda i: i.token(iss=None), "no iss claim", id="no iss"),
        pytest.param(
            lambda i: i.token(kid="made-up"),
            "its signing key (kid) is not published by the issuer",
            id="unknown kid",
        ),
        pytest.param(
            lambda i: i.token(audience="another-service"),
            "no trust policy of the workspace names its audience",
            id="another audience",
        ),
        pytest.param(
            lambda i: i.token("repo:evil/agents:ref:refs/heads/main"),
            "no trust policy of the workspace matches its claims",
            id="another subject",
        ),
    ],
)
def test_every_refusal_is_the_one_400_invalid_grant_and_its_reason_is_logged(
    api: Api,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
    log_lines: LogLines,
    token_of: Any,
    reason: str,
) -> None:
    answer = exchange(api, token_of(issuer), workspace)

    assert refused_as_no_match(answer)
    assert refusal_reasons(log_lines) == [reason]


def test_the_key_set_is_fetched_again_once_its_bounded_lifetime_ends(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    fetcher.max_age = 10 * 24 * 3600  # the issuer asks for ten days
    exchange(api, issuer.token(), workspace)
    fetcher.now += MAX_CACHE - 1
    exchange(api, issuer.token(), workspace)
    cached = fetcher.jwks_fetches
    fetcher.now += 2

    exchange(api, issuer.token(), workspace)

    assert (cached, fetcher.jwks_fetches) == (1, 2)


def test_an_unreachable_issuer_is_a_503(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    fetcher.reachable = False

    answer = exchange(api, issuer.token(), workspace)

    assert (answer.status, answer.json["error"]) == (503, "temporarily_unavailable")


def test_ten_exchanges_against_an_issuer_whose_jwks_answers_500_fetch_it_once_then_503(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    fetcher.jwks_status = 500

    answers = [exchange(api, issuer.token(), workspace) for _ in range(10)]

    assert [(a.status, a.json["error"]) for a in answers] == [
        (503, "temporarily_unavailable")
    ] * 10
    assert fetcher.fetched == [
        GITHUB + "/.well-known/openid-configuration",
        GITHUB + "/.well-known/jwks",
    ]


def test_a_failed_issuer_is_fetched_again_only_once_30_seconds_passed(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    fetcher.reachable = False
    exchange(api, issuer.token(), workspace)
    fetcher.reachable = True
    fetcher.now += REFRESH_COOLDOWN - 1
    within = exchange(api, issuer.token(), workspace)
    fetched_within = len(fetcher.fetched)
    fetcher.now += 1

    after = exchange(api, issuer.token(), workspace)

    assert (within.status, fetched_within) == (503, 1)
    assert after.status == 200
    assert fetcher.jwks_fetches == 1


def test_a_failed_refresh_keeps_the_known_keys_working_and_is_not_retried_for_30_seconds(
    api: Api,
    issuer: WorkloadIssuer,
    fetcher: FakeFetcher,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    exchange(api, issuer.token(), workspace)  # the key set is cached
    fetcher.now += REFRESH_COOLDOWN
    fetcher.reachable = False
    unknown = [exchange(api, issuer.token(kid=f"made-up-{n}"), workspace) for n in range(3)]

    known = exchange(api, issuer.token(), workspace)

    assert [a.status for a in unknown] == [503, 503, 503]
    assert known.status == 200
    assert fetcher.fetched.count(GITHUB + "/.well-known/openid-configuration") == 2


def test_an_exchange_is_an_audit_event_at_most_once_per_workload_per_five_minutes(
    api: Api,
    alice: str,
    clock: FrozenClock,
    issuer: WorkloadIssuer,
    workspace: str,
    policy: dict[str, Any],
) -> None:
    exchange(api, issuer.token(), workspace)
    exchange(api, issuer.token(), workspace)
    exchange(api, issuer.token("repo:acme/agents:ref:refs/heads/dev"), workspace)
    clock.advance(minutes=5, seconds=1)
    exchange(api, issuer.token(), workspace)

    found = api.call("GET", "/v1/auth/events?type=workload.exchanged", alice).json["events"]

    subjects = sorted(e["data"]["sub"] for e in found)
    assert subjects == sorted([REPO_SUBJECT, REPO_SUBJECT, "repo:acme/agents:ref:refs/heads/dev"])
    assert {e["data"]["policyId"] for e in found} == {policy["id"]}
    assert {e["data"]["name"] for e in found} == {policy["name"]}  # Activity names the policy
    assert {e["data"]["iss"] for e in found} == {GITHUB}
    assert found[0]["actor"] == {"system": "workload-identity"}
