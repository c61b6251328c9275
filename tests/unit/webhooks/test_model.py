"""A subscription's URL rule and the retry schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.webhooks.model import (
    RETRY_DELAYS,
    InvalidWebhook,
    check_url,
    retry_delay,
)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0x7f.1", "10.0.0.1",
     "[::1]", "[::ffff:127.0.0.1]", "[fe80::1%25eth0]", "1.2.3.4", "10.0.0.1."],
)
def test_every_spelling_of_an_ip_address_is_refused_by_the_shared_host_rule(host: str) -> None:
    with pytest.raises(InvalidWebhook) as refused:
        check_url(f"https://{host}/hook", local_mode=False)
    assert "not an IP address" in str(refused.value)


@pytest.mark.parametrize(
    "url",
    ["https://hooks.example.com/", "https://hooks.example.com:8443/in?x=1",
     "https://xn--bcher-kva.example/in"],
)
def test_https_to_a_public_host_name_is_a_webhook_url(url: str) -> None:
    assert check_url(url, local_mode=False) == url


@pytest.mark.parametrize(
    "url",
    ["https://127.1/", "https://1.2.3.4/", "https://hooks/", "https://localhost/",
     "https://hooks.local/", "https://hooks.123/", "http://hooks.example.com/",
     "https://hooks.example.com/ x", " https://hooks.example.com/"],
)
def test_anything_else_is_refused(url: str) -> None:
    with pytest.raises(InvalidWebhook):
        check_url(url, local_mode=False)


def test_loopback_http_is_a_webhook_url_in_local_mode_only() -> None:
    url = "http://127.0.0.1:8123/hook"

    assert check_url(url, local_mode=True) == url
    with pytest.raises(InvalidWebhook):
        check_url(url, local_mode=False)


def test_retries_follow_the_schedule_jittered_then_stop() -> None:
    delays = [retry_delay(n) for n in range(1, len(RETRY_DELAYS) + 2)]

    assert delays[-1] is None
    for delay, nominal in zip(delays, RETRY_DELAYS, strict=False):
        assert delay is not None
        assert nominal * 0.9 <= delay <= nominal * 1.1


def test_the_first_retry_can_be_set_for_local_use() -> None:
    assert retry_delay(1, timedelta(seconds=1)) == timedelta(seconds=1)
    assert retry_delay(2, timedelta(seconds=1)) is not None
