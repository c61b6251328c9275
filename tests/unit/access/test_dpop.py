"""DPoP proofs (RFC 9449 §4.3): each rule, and each refusal, one by one."""

from __future__ import annotations

import time

import pytest

from chalicelib.access import dpop
from chalicelib.access.dpop import BadProof, Proof, check_proof, thumbprint
from chalicelib.access.principal import DPOP_ALGS
from tests.fixtures.dpop import DpopKey, unsigned

URL = "https://api.example.com/v1/memory/items"
TOKEN = "s" "vc_not_a_real_key_only_a_string_to_hash"


@pytest.fixture(scope="module")
def key() -> DpopKey:
    return DpopKey()


def check(proof: str, method: str = "GET", url: str = URL, now: float | None = None,
          credential: str | None = TOKEN) -> Proof | BadProof:
    return check_proof(proof, method, url, time.time() if now is None else now, credential)


@pytest.mark.parametrize("alg", ["ES256", "RS256", "EdDSA"])
def test_a_proof_by_each_allowed_algorithm_passes_with_its_keys_thumbprint(alg: str) -> None:
    key = DpopKey(alg)
    found = check(key.proof("GET", URL, TOKEN))
    assert isinstance(found, Proof)
    assert found.jkt == key.jkt


def test_the_rfc_7638_example_key_has_the_rfc_thumbprint() -> None:
    jwk = {
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSo"
        "c_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0"
        "_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI"
        "4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


def test_a_proof_from_another_key_passes_but_names_that_key(key: DpopKey) -> None:
    other = DpopKey()
    found = check(other.proof("GET", URL, TOKEN))
    assert isinstance(found, Proof)
    assert found.jkt == other.jkt != key.jkt  # the resolver compares it with the binding


@pytest.mark.parametrize(
    ("method", "sent"), [("GET", "POST"), ("POST", "GET"), ("get", "GET")]
)
def test_a_proof_for_another_method_is_refused(key: DpopKey, method: str, sent: str) -> None:
    found = check(key.proof(method, URL, TOKEN), method=sent)
    assert isinstance(found, BadProof)
    assert "htm" in found.reason


@pytest.mark.parametrize(
    "htu",
    [
        "https://api.example.com/v1/memory/other",
        "https://evil.example.com/v1/memory/items",
        "http://api.example.com/v1/memory/items",
        "https://api.example.com:8443/v1/memory/items",
        "https://api.example.com/v1/memory/items/",
        "not a url",
    ],
)
def test_a_proof_for_another_url_is_refused(key: DpopKey, htu: str) -> None:
    found = check(key.proof("GET", htu, TOKEN))
    assert isinstance(found, BadProof)
    assert "htu" in found.reason


@pytest.mark.parametrize(
    "htu",
    [
        "HTTPS://API.EXAMPLE.COM/v1/memory/items",
        "https://api.example.com:443/v1/memory/items",
        "https://api.example.com/v1/memory/items?limit=5",
        "https://api.example.com/v1/memory/items#part",
    ],
)
def test_a_proof_for_the_same_url_spelled_otherwise_passes(key: DpopKey, htu: str) -> None:
    assert isinstance(check(key.proof("GET", htu, TOKEN)), Proof)


@pytest.mark.parametrize("offset", [-61, 61, -3600, 3600])
def test_a_stale_or_future_iat_is_refused(key: DpopKey, offset: int) -> None:
    now = time.time()
    found = check(key.proof("GET", URL, TOKEN, iat=now + offset), now=now)
    assert isinstance(found, BadProof)
    assert "iat" in found.reason


@pytest.mark.parametrize("offset", [-59, 59])
def test_an_iat_within_60_seconds_either_way_passes(key: DpopKey, offset: int) -> None:
    now = time.time()
    assert isinstance(check(key.proof("GET", URL, TOKEN, iat=int(now) + offset), now=now), Proof)


def test_a_missing_ath_is_refused_when_a_credential_comes_with_it(key: DpopKey) -> None:
    found = check(key.proof("GET", URL))
    assert isinstance(found, BadProof)
    assert "ath" in found.reason


def test_an_ath_of_another_credential_is_refused(key: DpopKey) -> None:
    found = check(key.proof("GET", URL, "s" "vc_another_credential"))
    assert isinstance(found, BadProof)
    assert "ath" in found.reason


def test_no_ath_is_needed_without_a_credential(key: DpopKey) -> None:
    assert isinstance(check(key.proof("GET", URL), credential=None), Proof)


@pytest.mark.parametrize("member", ["d", "p", "k"])
def test_a_private_key_in_the_proofs_jwk_is_refused(key: DpopKey, member: str) -> None:
    leaked = {**key.jwk, member: "AAAA"}
    found = check(key.proof("GET", URL, TOKEN, header={"jwk": leaked}))
    assert isinstance(found, BadProof)
    assert "private" in found.reason


@pytest.mark.parametrize("typ", [None, "JWT", "dpop+JWT", "at+jwt"])
def test_a_typ_other_than_dpop_jwt_is_refused(key: DpopKey, typ: str | None) -> None:
    found = check(key.proof("GET", URL, TOKEN, header={"typ": typ}))
    assert isinstance(found, BadProof)
    assert "typ" in found.reason


def test_alg_none_is_refused(key: DpopKey) -> None:
    claims = {"jti": "a", "htm": "GET", "htu": URL, "iat": int(time.time())}
    found = check(unsigned({"typ": "dpop+jwt", "alg": "none", "jwk": key.jwk}, claims))
    assert isinstance(found, BadProof)
    assert "alg" in found.reason


@pytest.mark.parametrize("alg", ["HS256", "HS512"])
def test_an_hmac_alg_is_refused_even_with_a_valid_mac(alg: str) -> None:
    import jwt

    secret = b"s" b"hared-secret" * 8
    claims = {"jti": "a", "htm": "GET", "htu": URL, "iat": int(time.time())}
    jwk = {"kty": "oct", "k": "c2VjcmV0"}
    proof = jwt.encode(claims, secret, algorithm=alg, headers={"typ": "dpop+jwt", "jwk": jwk})
    found = check(proof, credential=None)
    assert isinstance(found, BadProof)
    assert "alg" in found.reason


def test_a_signature_by_another_key_than_the_jwk_is_refused(key: DpopKey) -> None:
    other = DpopKey()
    found = check(other.proof("GET", URL, TOKEN, header={"jwk": key.jwk}))
    assert isinstance(found, BadProof)
    assert "signature" in found.reason


def test_a_jwk_of_another_type_than_the_alg_is_refused() -> None:
    ec_key, ed_key = DpopKey("ES256"), DpopKey("EdDSA")
    found = check(ed_key.proof("GET", URL, TOKEN, header={"jwk": ec_key.jwk}))
    assert isinstance(found, BadProof)
    assert "jwk" in found.reason


def test_a_proof_without_jti_is_refused(key: DpopKey) -> None:
    found = check(key.proof("GET", URL, TOKEN, drop=("jti",)))
    assert isinstance(found, BadProof)
    assert "jti" in found.reason


@pytest.mark.parametrize("proof", [None, "", "abc", "a.b", "a.b.c.d", "x" * 9000])
def test_no_proof_or_not_a_jwt_is_refused(proof: str | None) -> None:
    assert isinstance(check_proof(proof, "GET", URL, time.time(), TOKEN), BadProof)


def test_a_required_nonce_must_be_the_one_the_check_accepts(key: DpopKey) -> None:
    def nonce_ok(nonce: object) -> bool:
        return nonce == "n-1"

    stale = check_proof(key.proof("POST", URL), "POST", URL, time.time(), None, nonce_ok)
    fresh = check_proof(
        key.proof("POST", URL, claims={"nonce": "n-1"}), "POST", URL, time.time(), None, nonce_ok
    )
    assert isinstance(stale, BadProof) and stale.nonce
    assert isinstance(fresh, Proof)


def test_the_ath_is_the_base64url_sha256_of_the_credential() -> None:
    # RFC 9449 §7.1's example: the access token and its ath.
    token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    assert dpop.ath(token) == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


def test_the_challenge_names_the_error_and_every_algorithm() -> None:
    assert dpop.challenge("invalid_dpop_proof") == (
        'DPoP error="invalid_dpop_proof", algs="ES256 RS256 EdDSA"'
    )
    assert dpop.ALGS == DPOP_ALGS
