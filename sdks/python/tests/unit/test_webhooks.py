"""The webhook verifier, held to the Standard Webhooks test vector."""

from __future__ import annotations

import pytest

from memory_sdk import WebhookVerificationError, verify_webhook
from memory_sdk.webhooks import sign

SECRET = "wh" "sec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
OTHER = "wh" "sec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(signature: str = SIGNATURE, timestamp: int = TIMESTAMP) -> dict[str, str]:
    return {
        "Webhook-Id": MSG_ID,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": signature,
    }


def at(seconds: float) -> float:
    return TIMESTAMP + seconds


def test_the_standard_webhooks_test_vector_signs_and_verifies() -> None:
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == SIGNATURE
    assert verify_webhook(BODY, headers(), SECRET, now=lambda: at(0)) == {"test": 2432232314}


def test_any_of_several_secrets_verifies_during_a_rotation() -> None:
    both = f"{sign(OTHER, MSG_ID, TIMESTAMP, BODY)} {SIGNATURE}"

    assert verify_webhook(BODY, headers(both), [OTHER, SECRET], now=lambda: at(0))
    assert verify_webhook(BODY, headers(SIGNATURE), [OTHER, SECRET], now=lambda: at(0))


@pytest.mark.parametrize(
    ("body", "sent", "secrets", "seconds"),
    [
        (b'{"test": 2432232315}', headers(), SECRET, 0),  # another body
        (BODY, headers(), OTHER, 0),  # another secret
        (BODY, headers("v2," + SIGNATURE[3:]), SECRET, 0),  # another version
        (BODY, headers(), SECRET, 301),  # too old
        (BODY, headers(), SECRET, -301),  # from the future
        (BODY, {"webhook-id": MSG_ID}, SECRET, 0),  # headers missing
        (BODY, headers(timestamp=TIMESTAMP).copy() | {"Webhook-Timestamp": "soon"}, SECRET, 0),
        (BODY, headers(), [], 0),  # no secret
    ],
)
def test_anything_else_is_refused(
    body: bytes, sent: dict[str, str], secrets: str | list[str], seconds: int
) -> None:
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, sent, secrets, now=lambda: at(seconds))


def test_the_tolerance_is_five_minutes_either_way() -> None:
    assert verify_webhook(BODY, headers(), SECRET, now=lambda: at(300))
    assert verify_webhook(BODY, headers(), SECRET, now=lambda: at(-300))
