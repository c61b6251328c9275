"""ID-token verification against trusted issuers (no I/O)."""

from __future__ import annotations

from unittest import mock

import pytest

from chalicelib.errors import DependencyUnavailable
from chalicelib.sessions.openid import IdTokenRejected, IdTokenVerifier
from tests.oidc_issuer import (
    FakeIssuer,
    hs256_with_public_key,
    jwks_clients,
    signed_raw,
    unsigned,
    with_foreign_signature,
)

# -- verification --------------------------------------------------------------------------


@pytest.fixture
def idp() -> FakeIssuer:
    return FakeIssuer()


@pytest.fixture
def verifier(idp: FakeIssuer) -> IdTokenVerifier:
    return IdTokenVerifier([idp.trusted], jwks_clients(idp))


def test_valid_id_token_gives_issuer_subject_email_and_name(
    idp: FakeIssuer, verifier: IdTokenVerifier
) -> None:
    identity = verifier.verify(idp.id_token("alice"))
    assert (identity.issuer, identity.subject) == (idp.issuer, "alice")
    assert (identity.email, identity.email_verified, identity.name) == (
        "alice@example.test", True, "Alice"
    )


def test_email_and_name_are_optional(idp: FakeIssuer, verifier: IdTokenVerifier) -> None:
    identity = verifier.verify(idp.id_token("bob", email=None, email_verified=None, name=None))
    assert (identity.email, identity.email_verified, identity.name) == (None, None, None)


@pytest.mark.parametrize(
    "name",
    [
        "Hal \U0001f469\u200d\U0001f4bb",
        "\u067e\u0631\u06cc\u0633\u0627 \u0646\u06cc\u06a9\u200c\u0646\u0627\u0645",
    ],
)
def test_a_name_with_joiners_is_kept_as_labels_keep_it(
    idp: FakeIssuer, verifier: IdTokenVerifier, name: str
) -> None:
    assert verifier.verify(idp.id_token("hal", name=name)).name == name


def test_a_name_with_a_bidirectional_override_is_dropped(
    idp: FakeIssuer, verifier: IdTokenVerifier
) -> None:
    assert verifier.verify(idp.id_token("eve", name="Eve\u202eevil")).name is None


def test_a_token_from_each_of_several_issuers_is_accepted() -> None:
    first, second = FakeIssuer(), FakeIssuer("https://other.example", "other-client")
    verifier = IdTokenVerifier([first.trusted, second.trusted], jwks_clients(first, second))
    assert verifier.verify(first.id_token("a")).issuer == first.issuer
    assert verifier.verify(second.id_token("a")).issuer == second.issuer


def rejection(verifier: IdTokenVerifier, token: str) -> str:
    with pytest.raises(IdTokenRejected) as rejected:
        verifier.verify(token)
    return rejected.value.description


FAILURES = {
    "bad signature": (lambda i: with_foreign_signature(i, i.claims()), "signature"),
    "wrong issuer": (lambda i: i.id_token(iss="https://evil.example"), "issuer"),
    "issuer not a string": (lambda i: signed_raw(i, {**i.claims(), "iss": [i.issuer]}), "issuer"),
    "no issuer": (lambda i: i.id_token(iss=None), "issuer"),
    "claims not an object": (lambda i: signed_raw(i, [i.issuer]), "well-formed"),
    "wrong audience": (lambda i: i.id_token(aud="someone-else"), "audience"),
    "expired": (lambda i: i.id_token(iat=1_700_000_000, exp=1_700_000_600), "expired"),
    "unknown kid": (lambda i: i.provider.sign(i.claims(), headers={"kid": "nope"}), "kid"),
    "alg none": (lambda i: unsigned(i, i.claims()), "RS256"),
    "HS256 with the public key": (lambda i: hs256_with_public_key(i, i.claims()), "RS256"),
    "not a JWT": (lambda i: "not-a-token", "well-formed"),
    "no kid": (lambda i: i.provider.sign(i.claims(), headers={"kid": None}), "kid"),
    "no subject": (lambda i: i.id_token(sub=None), "sub"),
    "subject too long": (lambda i: i.id_token("x" * 256), "subject"),
    "issued in the future": (lambda i: i.id_token(iat=4_000_000_000, exp=4_000_000_600), "yet"),
    "several audiences, no azp": (lambda i: i.id_token(aud=[i.audience, "other"]), "azp"),
}


@pytest.mark.parametrize("case", FAILURES, ids=list(FAILURES))
def test_unacceptable_id_tokens_are_rejected_with_their_reason(
    idp: FakeIssuer, verifier: IdTokenVerifier, case: str
) -> None:
    forge, reason = FAILURES[case]
    description = rejection(verifier, forge(idp))
    assert reason in description


def test_several_audiences_with_our_azp_are_accepted(
    idp: FakeIssuer, verifier: IdTokenVerifier
) -> None:
    token = idp.id_token(aud=[idp.audience, "other"], azp=idp.audience)
    assert verifier.verify(token).subject == "alice"


def test_a_rejection_never_echoes_the_token(idp: FakeIssuer, verifier: IdTokenVerifier) -> None:
    token = idp.id_token(aud="someone-else")
    description = rejection(verifier, token)
    assert token not in description and token.split(".")[1] not in description


# -- the issuer's key set: cached, refreshed once on an unknown kid, fails closed --------------


def test_key_set_is_fetched_once_and_cached(idp: FakeIssuer, verifier: IdTokenVerifier) -> None:
    for subject in ("a", "b", "c"):
        verifier.verify(idp.id_token(subject))
    assert idp.fetches == 1


def test_rotated_issuer_key_is_picked_up_by_one_refresh(idp: FakeIssuer) -> None:
    idp.cooldown = 0
    verifier = IdTokenVerifier([idp.trusted], jwks_clients(idp))
    verifier.verify(idp.id_token())
    idp.rotate(keep_old=False)
    assert verifier.verify(idp.id_token("after")).subject == "after"
    assert idp.fetches == 2


def test_unknown_kid_refreshes_once_then_fails(idp: FakeIssuer) -> None:
    idp.cooldown = 0
    verifier = IdTokenVerifier([idp.trusted], jwks_clients(idp))
    verifier.verify(idp.id_token())
    assert "kid" in rejection(verifier, idp.provider.sign(idp.claims(), headers={"kid": "x"}))
    assert idp.fetches == 2


def test_made_up_kids_cannot_make_us_refetch_during_the_cooldown(
    idp: FakeIssuer, verifier: IdTokenVerifier
) -> None:
    verifier.verify(idp.id_token())
    for n in range(5):
        rejection(verifier, idp.provider.sign(idp.claims(), headers={"kid": f"made-up-{n}"}))
    assert idp.fetches == 1
    idp.rotate()
    later = idp.fetches
    with mock.patch("jwt.jwks_client.time.monotonic", return_value=10**9):
        assert verifier.verify(idp.id_token("late")).subject == "late"
    assert idp.fetches == later + 1


def test_unreachable_issuer_is_a_dependency_failure(
    idp: FakeIssuer, verifier: IdTokenVerifier
) -> None:
    idp.reachable = False
    with pytest.raises(DependencyUnavailable):
        verifier.verify(idp.id_token())


def test_untrusted_issuer_never_causes_a_fetch(idp: FakeIssuer, verifier: IdTokenVerifier) -> None:
    rejection(verifier, idp.id_token(iss="https://evil.example"))
    assert idp.fetches == 0
