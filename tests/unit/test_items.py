"""The registry of the table's item keys: the layout the data already in the table has."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib import items


@pytest.mark.parametrize(
    ("item_key", "pk", "sk"),
    [
        (items.api_key("usr_a", "key_1"), "USER#usr_a", "KEY#key_1"),
        (items.credential("ab12"), "CRED#ab12", "CRED"),
        (items.workspace("ws_1"), "WS#ws_1", "WS"),
        (items.member("ws_1", "usr_a"), "WS#ws_1", "MEMBER#usr_a"),
        (items.membership("usr_a", "ws_1"), "USER#usr_a", "WS#ws_1"),
        (items.event("usr_a", "evt_1"), "USER#usr_a", "EVT#evt_1"),
        (items.profile("usr_a"), "USER#usr_a", "PROFILE"),
        (items.login("https://idp.example", "s#1"), "IDP#https://idp.example#s#1", "IDP"),
        (items.refresh_token("ab12"), "REFRESH#ab12", "REFRESH"),
        (items.refresh_family("fam_1"), "RFAMILY#fam_1", "FAMILY"),
        (items.oauth_client("cli_1"), "OAUTHCLIENT#cli_1", "CLIENT"),
        (items.oauth_request("r1"), "OAUTHREQ#r1", "REQ"),
        (items.oauth_code("ab12"), "OAUTHCODE#ab12", "CODE"),
        (items.registration_window("192.0.2.1", 3600), "DCRLIMIT#192.0.2.1", "WINDOW#3600"),
        (items.idempotency_record("ab12"), "IDEMPOTENCY#ab12", "IDEMPOTENCY"),
    ],
)
def test_each_item_keeps_its_key_layout(item_key: dict[str, Any], pk: str, sk: str) -> None:
    assert item_key == {"pk": {"S": pk}, "sk": {"S": sk}}


def test_a_registration_window_counts_at_most_64_characters_of_an_address() -> None:
    long_address = "2001:db8:" + "a" * 100

    item_key = items.registration_window(long_address, 0)

    assert item_key["pk"]["S"] == "DCRLIMIT#" + long_address[:64]


def test_the_query_prefixes_are_those_of_the_sort_keys() -> None:
    assert items.api_key("u", "k")["sk"]["S"].startswith(items.KEY_PREFIX)
    assert items.membership("u", "w")["sk"]["S"].startswith(items.WORKSPACE_PREFIX)
    assert items.member("w", "u")["sk"]["S"].startswith(items.MEMBER_PREFIX)
    assert items.event("u", "e")["sk"]["S"].startswith(items.EVENT_PREFIX)
