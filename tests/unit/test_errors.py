"""The error catalogue: each documented (status, code) once, and the only way to raise one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from chalicelib import errors
from chalicelib.access.principal import REALM, Refusal
from chalicelib.errors import OAUTH_ERRORS, PROBLEMS, TITLES, Problem

CHALICELIB = Path(errors.__file__).resolve().parent
# Constructors that take a status or a code: outside the catalogue, a literal there would be
# a (status, code) pair the catalogue does not hold.
CONSTRUCTORS = {"Problem", "ServiceError", "OAuthError"}


def catalogue_entries() -> list[Problem]:
    return [value for value in vars(errors).values() if isinstance(value, Problem)]


def test_every_entry_is_in_one_of_the_two_tables() -> None:
    tabled = list(PROBLEMS.values()) + list(OAUTH_ERRORS)
    assert sorted(map(repr, catalogue_entries())) == sorted(map(repr, tabled))


def test_each_problem_code_is_listed_once() -> None:
    problems = [p for p in catalogue_entries() if p not in OAUTH_ERRORS]
    assert len({p.code for p in problems}) == len(problems)


def test_every_status_has_a_title() -> None:
    assert {p.status for p in PROBLEMS.values()} <= set(TITLES)


def constructions_outside_the_catalogue() -> list[str]:
    found = []
    for path in sorted(CHALICELIB.rglob("*.py")):
        if path.name == "errors.py" and path.parent == CHALICELIB:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name in CONSTRUCTORS:
                    found.append(f"{path.relative_to(CHALICELIB)}:{node.lineno} {name}")
    return found


def test_no_module_raises_a_status_or_code_that_is_not_in_the_catalogue() -> None:
    assert constructions_outside_the_catalogue() == []


def test_an_error_says_its_default_detail_unless_given_a_precise_one() -> None:
    assert errors.NOT_FOUND.error().detail == "No such resource."
    precise = errors.NOT_FOUND.error("No API key with this id.")
    assert (precise.status, precise.code, precise.detail) == (404, "not_found", precise.detail)
    assert precise.body()["detail"] == "No API key with this id."


@pytest.mark.parametrize(
    ("credential_sent", "challenge"),
    [(False, REALM), (True, f'{REALM}, error="invalid_token"')],
)
def test_a_401_refusal_challenges_for_a_bearer_credential(
    credential_sent: bool, challenge: str
) -> None:
    error = Refusal(errors.INVALID_CREDENTIALS).error(credential_sent)
    assert (error.status, error.code) == (401, "invalid_credentials")
    assert error.headers == {"WWW-Authenticate": challenge}


def test_a_403_refusal_has_no_challenge() -> None:
    error = Refusal(errors.NOT_A_MEMBER).error(credential_sent=True)
    assert (error.status, error.code, error.headers) == (403, "not_a_member", {})
