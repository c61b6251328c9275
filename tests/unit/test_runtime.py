"""The AWS clients' failure budget: a frozen dependency becomes a 503 within 5 s.

Arithmetic on the clients' real configuration (no timing is measured here): every attempt
waits at most connect + read timeout, and botocore's standard retry mode sleeps at most
1 s x 2^(n-1) before the n-th retry (its throttling scale; other errors back off far less).
"""

from __future__ import annotations

from typing import Any

from chalicelib.config import Settings
from chalicelib.runtime import Services, aws_client

ROUTE_BUDGET = 5.0  # seconds: README, "Retries"
THROTTLING_BASE_SCALE = 1.0  # botocore.retries.standard.ExponentialBackoff


def worst_case_seconds(client: Any) -> float:
    config = client.meta.config
    attempts = config.retries["total_max_attempts"]
    waiting = attempts * (config.connect_timeout + config.read_timeout)
    backoff = sum(THROTTLING_BASE_SCALE * 2 ** (n - 1) for n in range(1, attempts))
    return float(waiting + backoff)


def test_one_call_to_dynamodb_or_kms_fails_within_the_route_budget() -> None:
    for service in ("dynamodb", "kms"):
        assert worst_case_seconds(aws_client(service, "us-east-1")) <= ROUTE_BUDGET


def test_a_frozen_dependency_is_given_up_after_two_read_timeouts() -> None:
    config = aws_client("dynamodb", "us-east-1").meta.config
    assert config.retries == {"mode": "standard", "total_max_attempts": 2}
    assert config.retries["total_max_attempts"] * config.read_timeout <= 3.0


def test_bookkeeping_never_costs_a_request_more_than_a_second() -> None:
    settings = Settings(
        table_name="t",
        encryption_key_id="alias/k",
        signing_key_id="alias/s",
        previous_signing_key_id=None,
        issuer="https://auth.example.com",
        region="us-east-1",
        refresh_token_key_id="alias/r",
    )
    assert worst_case_seconds(Services(settings).last_use_dynamodb) <= 1.0
