import pytest

from chalicelib.access.resolution import INVALID, MISSING, bearer_token


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_authorization_is_missing_credentials(header: str | None) -> None:
    assert bearer_token(header) is MISSING


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer a b", "token", "Bearer  "])
def test_malformed_authorization_is_invalid_credentials(header: str) -> None:
    assert bearer_token(header) is INVALID


def test_bearer_scheme_is_case_insensitive() -> None:
    assert bearer_token("bearer abc") == "abc"
