"""GitHub's report format, key list and signature, without I/O."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from chalicelib.fetch import FetchRefused
from chalicelib.scanning.github import (
    PublishedKeys,
    parse_key_list,
    verify,
)


def pem(key: object) -> str:
    return key.public_key().public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


P256 = ec.generate_private_key(ec.SECP256R1())
P384 = ec.generate_private_key(ec.SECP384R1())
RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_LIST = {
    "public_keys": [
        {"key_identifier": "good", "key": pem(P256), "is_current": True},
        {"key_identifier": "p384", "key": pem(P384), "is_current": False},
        {"key_identifier": "rsa", "key": pem(RSA), "is_current": False},
        {"key_identifier": "broken", "key": "-----BEGIN PUBLIC KEY-----\nxx\n"},
        {"key_identifier": 7, "key": pem(P256)},
        "not an object",
    ]
}


def sign(body: bytes, key: ec.EllipticCurvePrivateKey = P256) -> str:
    return base64.b64encode(key.sign(body, ec.ECDSA(hashes.SHA256()))).decode()


def test_only_p256_keys_of_the_list_are_kept() -> None:
    assert set(parse_key_list(KEY_LIST)) == {"good"}


def test_a_signature_by_the_named_published_key_verifies_only_over_its_body() -> None:
    keys = PublishedKeys(lambda: KEY_LIST, clock=lambda: 0.0)
    body = b'[{"token":"x","type":"t","url":"u","source":"content"}]'
    signature = sign(body)

    assert verify(keys, "good", signature, body) is True
    assert verify(keys, "good", signature, body + b" ") is False
    assert verify(keys, "good", sign(body, ec.generate_private_key(ec.SECP256R1())), body) is False
    assert verify(keys, "p384", sign(body, P384), body) is False
    assert verify(keys, "missing", signature, body) is False
    assert verify(keys, None, signature, body) is False
    assert verify(keys, "good", None, body) is False
    assert verify(keys, "good", "not base64!", body) is False
    assert verify(keys, "good", base64.b64encode(b"garbage").decode(), body) is False


def test_an_unreachable_key_list_is_an_error_not_a_verdict() -> None:
    from chalicelib.scanning.github import KeyListUnavailable

    def unreachable() -> bytes:
        raise FetchRefused("down")

    with pytest.raises(KeyListUnavailable):
        verify(PublishedKeys(unreachable), "good", "c2ln", b"[]")


@pytest.mark.parametrize("raw", [{}, [], "nope", {"public_keys": 3}, None])
def test_a_key_list_in_another_format_is_unavailable_or_empty(raw: object) -> None:
    from chalicelib.scanning.github import KeyListUnavailable

    try:
        keys = parse_key_list(raw)
    except KeyListUnavailable:
        keys = {}
    assert keys == {}
