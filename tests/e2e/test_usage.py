"""Usage and quotas over real HTTP against the local stack, whose usage write window is
LOCAL_USAGE_FLUSH_SECONDS (2 s) instead of 5 minutes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.e2e.conftest import Stack

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"


def create(stack: Stack, **body: Any) -> dict[str, Any]:
    body.setdefault("label", "e2e usage")
    answer = stack.call("POST", KEYS, stack.token, body=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_a_keys_requests_are_counted_by_hour_and_day_once_written(stack: Stack) -> None:
    key = create(stack)
    since = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:00:00Z")
    statuses = [stack.call("GET", WHOAMI, key["key"]).status_code for _ in range(5)]
    statuses += stack.flush_usage(key["key"], key["id"])  # writes the rest, and counts itself

    by_hour = stack.call(
        "GET", f"{KEYS}/{key['id']}/usage?granularity=hour&from={since}", stack.token
    ).json()
    by_day = stack.call("GET", f"{KEYS}/{key['id']}/usage", stack.token).json()

    sent = len(statuses)  # 6, unless a write's outcome was unknown (then one a window more)
    assert statuses == [200] * sent
    assert sum(b["requests"] for b in by_hour["buckets"]) == sent
    assert by_day["granularity"] == "day" and len(by_day["buckets"]) == 7
    assert by_day["buckets"][-1]["requests"] == sent or by_day["buckets"][-2]["requests"] > 0
    assert by_day["complete"] is False


def test_a_key_over_its_daily_quota_is_refused_with_retry_after(stack: Stack) -> None:
    key = create(stack, requestsPerDay=3)

    allowed = [stack.call("GET", WHOAMI, key["key"]).status_code for _ in range(3)]
    refused = stack.call("GET", WHOAMI, key["key"])
    events = stack.call(
        "GET", f"/v1/auth/events?type=key.quota_exceeded&keyId={key['id']}", stack.token
    ).json()["events"]
    lifted = stack.call("PATCH", f"{KEYS}/{key['id']}", stack.token, body={"requestsPerDay": None})

    assert allowed == [200, 200, 200]
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    assert 1 <= int(refused.headers["Retry-After"]) <= 86_400
    assert [e["type"] for e in events] == ["key.quota_exceeded"]
    assert lifted.json()["requestsPerDay"] is None
    assert stack.call("GET", WHOAMI, key["key"]).status_code == 200
