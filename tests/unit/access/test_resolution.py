import pytest

from chalicelib.access.principal import Refusal
from chalicelib.access.resolution import INVALID, MISSING, bearer_token


@pytest.mark.parametrize("header", [None, "", "   "])
def test_missing_authorization_is_missing_credentials(header: str | None) -> None:
    assert bearer_token(header) is MISSING


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer a b", "token", "Bearer  "])
def test_malformed_authorization_is_invalid_credentials(header: str) -> None:
    assert bearer_token(header) is INVALID


def test_bearer_scheme_is_case_insensitive() -> None:
    assert bearer_token("bearer abc") == "abc"


def test_refusals_are_results_with_status_and_code() -> None:
    assert isinstance(MISSING, Refusal)
    assert (MISSING.status, MISSING.code) == (401, "missing_credentials")


@pytest.mark.parametrize(
    "header", ["sv" + "c_" + "A" * 50, "leg" + "acy_abc", "  " + "sv" + "c_x  "]
)
def test_a_key_without_its_scheme_is_told_to_send_bearer(header: str) -> None:
    refusal = bearer_token(header)

    assert isinstance(refusal, Refusal)
    assert (refusal.status, refusal.code) == (401, "invalid_credentials")
    assert "Bearer <key>" in refusal.detail
