"""strict_parsing's one_spelling: a JSON body's fields in snake_case or camelCase."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.strict_parsing import ConflictingSpellings, camel_case, one_spelling, snake_case

TOKEN = {"refresh_token", "grant_type"}
KEY = {"label", "workspaceId", "workspace_id", "requestsPerDay", "expiresInDays"}


@pytest.mark.parametrize(
    ("snake", "camel"),
    [
        ("refresh_token", "refreshToken"),
        ("subject_token_type", "subjectTokenType"),
        ("workspace_id", "workspaceId"),
        ("label", "label"),
    ],
)
def test_the_two_spellings_of_a_name(snake: str, camel: str) -> None:
    assert (camel_case(snake), snake_case(camel)) == (camel, snake)
    assert (camel_case(camel), snake_case(snake)) == (camel, snake)


@pytest.mark.parametrize(
    ("body", "declared", "taken"),
    [
        ({"refreshToken": "a"}, TOKEN, {"refresh_token": "a"}),
        (
            {"refresh_token": "a", "grantType": "g"},
            TOKEN,
            {"refresh_token": "a", "grant_type": "g"},
        ),
        ({"refreshToken": "a", "refresh_token": "a"}, TOKEN, {"refresh_token": "a"}),
        ({"requests_per_day": 3, "label": "k"}, KEY, {"requestsPerDay": 3, "label": "k"}),
        ({"expires_in_days": 5}, KEY, {"expiresInDays": 5}),
        # declared in both spellings (an alias its model judges): each kept as sent
        ({"workspace_id": "a", "workspaceId": "b"}, KEY, {"workspace_id": "a", "workspaceId": "b"}),
        # unknown in either spelling: kept, so that it is refused as unknown
        ({"deviceId": "x"}, TOKEN, {"deviceId": "x"}),
    ],
)
def test_each_field_is_taken_under_its_declared_name(
    body: dict[str, Any], declared: set[str], taken: dict[str, Any]
) -> None:
    assert one_spelling(body, declared) == taken


def test_two_spellings_that_disagree_are_refused_naming_both() -> None:
    with pytest.raises(ConflictingSpellings) as refused:
        one_spelling({"refresh_token": "a", "refreshToken": "b"}, TOKEN)

    assert refused.value.names == ("refresh_token", "refreshToken")
    assert str(refused.value) == "refresh_token and refreshToken disagree."
